#!/usr/bin/env bash
# False keeps and the bias of the recorded best under noise (issue 13): the
# real `ratchet run` with a proposer whose every change is a no-op (a
# comment), on a run whose score is 1 + noise, N(0, sd). Every keep of a
# candidate is a false keep, and the truth of every commit is 1.
#   bench/noise/run.sh [SEEDS] [CANDIDATES]    defaults: 20 seeds, 30 candidates
# sd is 0.5, 1 and 2 times a typical improvement of 0.01. Each setting of
# [accept] (baseline_repeats/confirm) runs SEEDS loops per noise level:
#   none       1/0  the engine's defaults (no repeats, no confirmation)
#   before     2/1  the gpt template before 809ba4c
#   template   3/2  the gpt template now
# Every setting sees the same draws (the same seeds). Prints, per setting
# and level: false keeps / candidates, and the recorded
# best (the last keep's mean) minus the truth, in standard errors of that
# mean (sd / sqrt(runs in it)), averaged over the seeds, and its worst.
# Needs build/ratchet (or RATCHET=path) and sqlite3. JOBS=2 loops at once.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seeds=${1:-20}
candidates=${2:-30}
jobs=${JOBS:-2}
ratchet=${RATCHET:-$root/build/ratchet}
work=$(mktemp -d /tmp/ratchet-bench-noise.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

settings="none:1:0 before:2:1 template:3:2"
levels="0.5 1 2"
delta=0.01

# one_loop NAME REPEATS CONFIRM LEVEL SEED: runs a loop, prints its row
# "name level seed candidates keeps best_minus_truth_in_se".
one_loop() {
  local name=$1 repeats=$2 confirm=$3 level=$4 seed=$5
  local dir=$work/$name-$level-$seed sd
  sd=$(awk -v l="$level" -v d="$delta" 'BEGIN { printf "%.6g", l * d }')
  mkdir -p "$dir"
  cat >"$dir/ratchet.toml" <<TOML
[loop]
seed = $seed
[edit]
files = ["notes.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[accept]
min_delta = 0.0
baseline_repeats = $repeats
confirm = $confirm
[stop]
max_experiments = $((candidates + 1))
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
  # The noise of run (experiment, attempt) of this loop: Box-Muller on awk's
  # generator seeded by all three, so a rerun of the bench draws the same.
  cat >"$dir/run.sh" <<SH
awk -v e="\$RATCHET_EXPERIMENT" -v a="\$RATCHET_ATTEMPT" 'BEGIN {
  srand($seed * 100003 + e * 101 + a); u = rand(); v = rand()
  z = sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v)
  print "---"; printf "score: %.9f\n", 1 + $sd * z }'
SH
  printf 'printf "# try %%s\\n" "$RATCHET_EXPERIMENT" >notes.txt\necho "no-op $RATCHET_EXPERIMENT"\n' \
    >"$dir/propose.sh"
  printf '# try 0\n' >"$dir/notes.txt"
  printf '.ratchet/\n' >"$dir/.gitignore"
  git -C "$dir" init -q -b main && git -C "$dir" add -A && git -C "$dir" commit -qm loop
  "$ratchet" run "$dir" >"$dir.out" 2>&1 || [ $? -eq 3 ] ||
    { echo "ratchet run failed in $dir:" >&2; tail -5 "$dir.out" >&2; return 1; }
  sqlite3 -readonly -batch -noheader -separator ' ' "$dir/.ratchet/ledger.db" "
    SELECT '$name', '$level', $seed,
      (SELECT count(*) FROM experiments WHERE baseline = 0 AND status IN ('keep', 'discard')),
      (SELECT count(*) FROM experiments WHERE baseline = 0 AND status = 'keep'),
      (SELECT (metric - 1.0) / ($sd / sqrt(max(metric_n, 1))) FROM experiments
        WHERE status = 'keep' ORDER BY id DESC LIMIT 1)"
  [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
export -f one_loop
export work delta candidates ratchet KEEP

for s in $settings; do
  IFS=: read -r name repeats confirm <<<"$s"
  i=0
  for level in $levels; do
    # Other seeds at each level: the decisions are scale-free (min_delta = 0,
    # no floor), so the levels are independent samples of one rate.
    i=$((i + 1))
    for seed in $(seq 1 "$seeds"); do echo "$name $repeats $confirm $level $((i * 1000 + seed))"; done
  done
done | xargs -P "$jobs" -L 1 bash -c 'one_loop "$@"' _ >"$work/rows"

printf '%-9s %6s %16s %10s %14s %14s\n' setting noise "false keeps" rate "best-truth/se" "worst"
awk '{ k = $1 " " $2; c[k] += $4; f[k] += $5; b[k] += $6; n[k]++
       if (!(k in w) || $6 < w[k]) w[k] = $6; order[k] = order[k] ? order[k] : ++seen }
     END { for (k in order) o[order[k]] = k
           for (i = 1; i <= seen; i++) { k = o[i]; split(k, p, " ")
             printf "%-9s %5sx %9d / %4d %9.2f%% %14.2f %14.2f\n", p[1], p[2], f[k], c[k],
                    100 * f[k] / c[k], b[k] / n[k], w[k] } }' "$work/rows"
awk '{ c[$1] += $4; f[$1] += $5 } END { for (k in c) printf "%s: %d of %d candidates kept (%.2f%%)\n", k, f[k], c[k], 100 * f[k] / c[k] }' "$work/rows" | sort
