#!/usr/bin/env bash
# The cost of one experiment cycle of ratchet (propose with the script
# proposer, commit, run a no-op, parse, decide, revert or keep, ledger
# writes), median over N experiments, beside Optuna's per-trial overhead
# with SQLite storage on a no-op objective. The two take turns ROUNDS times
# so that both see the same machine; every round is printed, then the
# medians of the rounds. Each round runs ratchet twice: as it runs by
# default, every proposer and run step in the sandbox (bwrap), and as a
# loop without it ([sandbox] required = false, bwrap out of PATH), so the
# sandbox's cost is measured side by side.
#   bench/engine/run.sh [N] [ROUNDS]    defaults: 200 experiments, 3 rounds
# Needs build/ratchet (or RATCHET=path), sqlite3 and Debian's python3-optuna
# (scripts/install-deps bench-engine); Optuna runs under /usr/bin/python3.
# KEEP=1 keeps the loop directories and databases (the path is printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-200}
rounds=${2:-3}
ratchet=${RATCHET:-$root/build/ratchet}
work=$(mktemp -d /tmp/ratchet-bench-engine.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT

# make_loop DIR [EXTRA]: a loop whose proposer writes the experiment number
# into x.txt and whose workload prints a pseudo-random score of it, so the
# loop both keeps and reverts. EXTRA is added to ratchet.toml.
make_loop() {
  local loop=$1 extra=${2:-}
  mkdir -p "$loop"
  cat >"$loop/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["ratchet.toml", "run.sh", "propose.sh"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "10s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = $((n + 1))
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
$extra
TOML
  cat >"$loop/run.sh" <<'SH'
echo "---"
echo "score: $(( ($(cat x.txt) * 7919) % 1009 ))"
SH
  cat >"$loop/propose.sh" <<'SH'
echo "$RATCHET_EXPERIMENT" > x.txt
echo "x = $RATCHET_EXPERIMENT"
SH
  echo 1 >"$loop/x.txt"
  (cd "$loop" && git init -q -b main && printf '.ratchet/\n' >.gitignore && git add -A &&
    git -c user.name=bench -c user.email=bench@localhost commit -qm bench)
}

# A PATH with every program of ours but bwrap, for the loop without the sandbox.
nobwrap=$work/bin
mkdir -p "$nobwrap"
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  for f in "$d"/*; do
    name=${f##*/}
    [ "$name" != bwrap ] && [ -x "$f" ] && [ ! -e "$nobwrap/$name" ] && ln -s "$f" "$nobwrap/$name"
  done
done 2>/dev/null || true

# ratchet_round DIR [plain]: "cycle own keeps" in seconds. Cycle: from the
# end of one experiment to the end of the next. Own share: the cycle minus
# the proposer's and the workload's process wall time. "plain": without the
# sandbox (checked: the ledger says so).
ratchet_round() {
  if [ "${2:-}" = plain ]; then
    make_loop "$1" $'[sandbox]\nrequired = false'
    PATH=$nobwrap "$ratchet" run "$1" >"$1.log" || [ $? = 3 ]  # 3: stopped by max_experiments
    sqlite3 -readonly "$1/.ratchet/ledger.db" "SELECT warnings FROM experiments WHERE id = 2" |
      grep -q "ran without the sandbox" || { echo "the plain loop ran in the sandbox" >&2; exit 1; }
  else
    make_loop "$1"
    "$ratchet" run "$1" >"$1.log" || [ $? = 3 ]
  fi
  sqlite3 -readonly -batch -noheader "$1/.ratchet/ledger.db" "
    WITH c AS (
      SELECT e.finished_at - p.finished_at AS cycle,
             e.finished_at - p.finished_at - e.propose_s - e.run_s AS own
      FROM experiments e JOIN experiments p ON p.id = e.id - 1 WHERE e.id > 1)
    SELECT (SELECT cycle FROM c ORDER BY cycle LIMIT 1 OFFSET (SELECT count(*) FROM c) / 2),
           (SELECT own FROM c ORDER BY own LIMIT 1 OFFSET (SELECT count(*) FROM c) / 2),
           (SELECT count(*) FROM experiments WHERE status = 'keep');" | tr '|' ' '
}

echo "$n experiments per round, $rounds rounds, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %10s %10s %6s %11s %10s %10s %13s %11s %12s\n' round cycle_ms own_ms kept optuna_ms own/opt \
  cycle/opt plain_cycle_ms plain_own_ms cycle/plain
for r in $(seq 1 "$rounds"); do
  read -r cycle own keeps < <(ratchet_round "$work/loop$r")
  read -r pcycle pown _ < <(ratchet_round "$work/plain$r" plain)
  optuna=$(/usr/bin/python3 "$root/bench/engine/optuna_trial.py" "$n" "$work/optuna$r.db")
  awk -v r="$r" -v c="$cycle" -v o="$own" -v k="$keeps" -v t="$optuna" -v pc="$pcycle" -v po="$pown" 'BEGIN {
    printf "%-6s %10.2f %10.2f %6d %11.2f %10.2f %10.2f %13.2f %11.2f %12.2f\n", r, c*1000, o*1000, k, t*1000, o/t, c/t, pc*1000, po*1000, c/pc }' |
    tee -a "$work/rows"
done
sort -k6 -n "$work/rows" | awk -v m=$(((rounds + 1) / 2)) 'NR == m {
  printf "median round by own/optuna: own share %.2f ms, whole cycle %.2f ms, optuna trial %.2f ms; own/optuna %.2f, cycle/optuna %.2f; without the sandbox: cycle %.2f ms, own share %.2f ms, sandboxed/plain cycle %.2f\n", $3, $2, $5, $6, $7, $8, $9, $10 }'
