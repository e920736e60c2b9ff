#!/usr/bin/env bash
# Experiments per hour with 1, 2, 4 and 8 workers on a workload that only
# sleeps (ideal scaling: N workers do N times the experiments of one), on
# this machine and through a real one-machine Slurm cluster
# (tests/slurm/cluster), next to the ideal N x the 1-worker rate of the same
# executor. Each loop does ROUNDS experiments per worker after its
# baseline; the rate is the candidates finished over the time from the
# first candidate's start to the last one's end (the ledger's clocks).
#   bench/workers/run.sh [SLEEP_S] [ROUNDS]    defaults: 2 s runs, 6 rounds
# Needs build/ratchet (or RATCHET=path), sqlite3; the Slurm half needs
# slurm-wlm, munge and root, and is skipped without them.
# KEEP=1 keeps the loop directories (the path is printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sleep_s=${1:-2}
rounds=${2:-6}
ratchet=${RATCHET:-$root/build/ratchet}
work=$(mktemp -d /tmp/ratchet-bench-workers.XXXXXX)
cluster=$work/cluster
cleanup() {
  "$root/tests/slurm/cluster" stop "$cluster" >/dev/null 2>&1 || true
  if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

# make_loop DIR WORKERS EXECUTOR: a one-parameter search whose run sleeps.
make_loop() {
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[edit]
files = ["params.env"]
protected = ["run.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "${sleep_s}s"
timeout = "60s"
workers = $2
[executor]
kind = "$3"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = $(($2 * rounds + 1))
[propose]
kind = "search"
[propose.search]
seed = 1
[[propose.search.param]]
name = "X"
type = "float"
low = 0.0
high = 1.0
TOML
  printf 'X=0.5\n' >"$1/params.env"
  printf '. ./params.env\nsleep %s\nawk -v x="$X" '"'"'BEGIN { print "---"; printf "score: %%.6f\\n", (x-0.3)^2 }'"'"'\n' \
    "$sleep_s" >"$1/run.sh"
  printf '.ratchet/\n' >"$1/.gitignore"
  git -C "$1" init -q -b main && git -C "$1" add -A && git -C "$1" commit -qm loop
}

# rate DIR: candidates per hour, from the ledger.
rate() {
  sqlite3 -readonly -batch -noheader "$1/.ratchet/ledger.db" \
    "SELECT count(*) * 3600.0 / (max(finished_at) - min(started_at)) FROM experiments
     WHERE baseline = 0 AND status IN ('keep', 'discard')"
}

executors=(local)
if command -v slurmd >/dev/null && [ "$(id -u)" -eq 0 ]; then
  eval "$("$root/tests/slurm/cluster" start "$cluster")"
  executors+=(slurm)
else
  echo "(no slurm-wlm or not root: the Slurm half is skipped)"
fi

printf '%-8s %8s %12s %10s %8s\n' executor workers "exp/hour" "ideal" "ratio"
for executor in "${executors[@]}"; do
  one=""
  for n in 1 2 4 8; do
    loop=$work/$executor-$n
    make_loop "$loop" "$n" "$executor"
    "$ratchet" run "$loop" >"$loop.out" 2>&1 || [ $? -eq 3 ] ||
      { echo "ratchet run failed:"; tail -5 "$loop.out"; exit 1; }
    r=$(rate "$loop")
    [ -n "$one" ] || one=$r
    awk -v e="$executor" -v n="$n" -v r="$r" -v one="$one" \
      'BEGIN { printf "%-8s %8d %12.0f %10.0f %8.2f\n", e, n, r, n * one, r / (n * one) }'
  done
done
