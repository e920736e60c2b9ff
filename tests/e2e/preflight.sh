#!/usr/bin/env bash
# [run] preflight through the real binary: each candidate first runs with a
# 1 s budget (RATCHET_BUDGET_SECONDS=1); one that crashes at the end of its
# program costs about a second, not its 5 s budget, and one that passes goes
# on to its full run and is kept. The baseline has no preflight.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "5s"
preflight = "1s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 3
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
[sandbox]
required = false
TOML
echo 6 >"$L/x.txt"
# Trains for the budget it is given (progress every 0.25 s), then saves:
# x=12 cannot save (a crash only the end of a run shows).
cat >"$L/run.sh" <<'SH'
x=$(cat x.txt)
end=$(awk -v b="$RATCHET_BUDGET_SECONDS" 'BEGIN { printf "%d", b * 4 }')
i=1
while [ $i -le "$end" ]; do
  echo "progress: step=$i loss=$(( (x - 3) * (x - 3) + 10 / i ))"
  sleep 0.25
  i=$((i + 1))
done
if [ "$x" -eq 12 ]; then echo "cannot save the model" >&2; exit 3; fi
echo "---"
echo "score: $(( (x - 3) * (x - 3) ))"
SH
cat >"$L/propose.sh" <<'SH'
if [ "$RATCHET_EXPERIMENT" -eq 2 ]; then echo 12 > x.txt; else echo 5 > x.txt; fi
echo "set x to $(cat x.txt)"
SH
git_init "$L"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep crash keep" "statuses"
reason=$(sql "$L" "SELECT reason FROM experiments WHERE id = 2")
expect_contains "$reason" "preflight: exit 3" "the crash is the preflight's"
expect_eq "$(sql "$L" "SELECT group_concat(attempt || ':' || purpose, ' ') FROM (SELECT * FROM runs ORDER BY experiment_id, attempt)")" \
  "1:main 0:preflight 0:preflight 1:main" "runs: the baseline's, two preflights, one full run"
wall=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 2")
awk -v w="$wall" 'BEGIN { exit !(w < 3) }' || fail "the failed preflight took ${wall}s of a 1s budget"
full=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 3 AND attempt = 1")
awk -v w="$full" 'BEGIN { exit !(w >= 5) }' || fail "the kept run did not run its 5s budget: ${full}s"
expect_eq "$(sql "$L" "SELECT metric FROM experiments WHERE id = 3")" "4.0" "scored by its full run"
[ -s "$L/.ratchet/runs/2/preflight.log" ] || fail "no preflight log"
expect_contains "$(cat "$L/.ratchet/runs/2/preflight.log")" "cannot save the model" "the preflight's log"

show=$("$RATCHET" show "$L" 2 --no-diff 2>&1) || fail "show failed: $show"
expect_contains "$show" "preflight: score -" "show lists the preflight"
audit=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit failed: $audit"
finish
