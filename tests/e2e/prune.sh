#!/usr/bin/env bash
# [prune] through the real binary: a run whose progress clearly trails the
# baseline's is stopped at a checkpoint (status pruned, the reason, the run
# cut short), a slightly better one runs its whole budget and is kept; the
# curves are in the ledger and in `ratchet show`.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "4s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[accept]
baseline_repeats = 2     # the curve's run-to-run noise
[prune]
rule = "median"
value = "loss"
min_runs = 1
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
# Ten progress lines over the 4 s budget; the loss falls towards the final
# score, plus a small jitter that differs between attempts.
cat >"$L/run.sh" <<'SH'
x=$(cat x.txt)
i=1
while [ $i -le 10 ]; do
  awk -v x="$x" -v i="$i" -v a="$RATCHET_ATTEMPT" \
    'BEGIN { printf "progress: step=%d loss=%.4f\n", i, (x-3)^2 + 10/i + (a % 2 ? 0.05 : -0.05) }'
  sleep 0.4
  i=$((i + 1))
done
echo "---"
echo "score: $(( (x - 3) * (x - 3) ))"
SH
# Experiment 2: x=12 (score 81 against 9, clearly worse); 3: x=5 (4, better).
cat >"$L/propose.sh" <<'SH'
if [ "$RATCHET_EXPERIMENT" -eq 2 ]; then echo 12 > x.txt; else echo 5 > x.txt; fi
echo "set x to $(cat x.txt)"
SH
git_init "$L"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep pruned keep" "statuses"
reason=$(sql "$L" "SELECT reason FROM experiments WHERE id = 2")
expect_contains "$reason" "pruned: loss" "the pruned run's reason"
expect_contains "$reason" "of the budget trails the median of" "the rule in the reason"
wall=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 2")
awk -v w="$wall" 'BEGIN { exit !(w < 3.5) }' || fail "the pruned run was not cut short: ${wall}s of a 4s budget"
full=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 3")
awk -v w="$full" 'BEGIN { exit !(w >= 4) }' || fail "the kept run did not run its budget: ${full}s"
expect_eq "$(sql "$L" "SELECT count(*) FROM runs WHERE curve LIKE '%\"loss\"%'")" "4" "runs with curves"
expect_eq "$(sql "$L" "SELECT count(*) FROM runs WHERE experiment_id = 2 AND json_array_length(curve) < 10")" \
  "1" "the pruned run's curve ends where it was cut"

show=$("$RATCHET" show "$L" 3 --no-diff 2>&1) || fail "show failed: $show"
expect_contains "$show" "curve (loss at ratchet's clock" "show prints the curve"
expect_contains "$show" "next to #1, the best it was proposed from" "show compares with the incumbent"
log=$("$RATCHET" log "$L" 2>&1)
expect_contains "$log" "pruned" "ratchet log lists the pruned experiment"

# The ledger still verifies: curves are journaled like every run.
audit=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit failed: $audit"
finish
