#!/usr/bin/env bash
# The cost of one experiment cycle of ratchet (propose with the script
# proposer, commit, run a no-op, parse, decide, revert or keep, ledger
# writes), median over N experiments, beside Optuna's per-trial overhead
# with SQLite storage, measured in the same run.
#   bench/engine/run.sh [N]        (default 200; needs build/ratchet and Debian python3-optuna,
#                                   run with /usr/bin/python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-200}
ratchet=${RATCHET:-$root/build/ratchet}
work=$(mktemp -d /tmp/ratchet-bench-engine.XXXXXX)
trap 'rm -rf "$work"' EXIT

loop=$work/loop
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
TOML
# A no-op workload: a pseudo-random score, so the loop both keeps and reverts.
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

"$ratchet" run "$loop" >"$work/run.log"
# Cycle: from the end of one experiment to the end of the next. Own share:
# the cycle minus the proposer's and the workload's process wall time.
read -r cycle own keeps < <(sqlite3 -readonly -batch -noheader "$loop/.ratchet/ledger.db" "
  WITH c AS (
    SELECT e.finished_at - p.finished_at AS cycle,
           e.finished_at - p.finished_at - e.propose_s - e.run_s AS own
    FROM experiments e JOIN experiments p ON p.id = e.id - 1 WHERE e.id > 1)
  SELECT (SELECT cycle FROM c ORDER BY cycle LIMIT 1 OFFSET (SELECT count(*) FROM c) / 2),
         (SELECT own FROM c ORDER BY own LIMIT 1 OFFSET (SELECT count(*) FROM c) / 2),
         (SELECT count(*) FROM experiments WHERE status = 'keep');" | tr '|' ' ')

optuna=$(/usr/bin/python3 "$root/bench/engine/optuna_trial.py" "$n" "$work/optuna.db")

awk -v c="$cycle" -v o="$own" -v t="$optuna" -v n="$n" -v k="$keeps" 'BEGIN {
  printf "experiments: %d (%d kept)\n", n, k
  printf "ratchet whole cycle (median):        %8.2f ms\n", c * 1000
  printf "ratchet own share (median):          %8.2f ms\n", o * 1000
  printf "optuna sqlite trial overhead (median): %6.2f ms\n", t * 1000
  printf "own share / optuna trial:            %8.2f\n", o / t
  printf "whole cycle / optuna trial:          %8.2f\n", c / t
}'
