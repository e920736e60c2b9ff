#!/usr/bin/env bash
# [prune] through the real binary: a run whose progress clearly trails the
# baseline's is stopped at a checkpoint (status pruned, the reason, the run
# cut short), a slightly better one runs its whole budget and is kept; the
# curves are in the ledger and in `ratchet show`. `ratchet rerun` then runs
# the pruned change again in full on the new incumbent.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt", "y.txt"]
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
echo 4 >"$L/y.txt"
# Ten progress lines over the 4 s budget; the loss falls towards the final
# score, plus a small jitter that differs between attempts.
cat >"$L/run.sh" <<'SH'
x=$(cat x.txt) y=$(cat y.txt)
i=1
while [ $i -le 10 ]; do
  awk -v x="$x" -v y="$y" -v i="$i" -v a="$RATCHET_ATTEMPT" \
    'BEGIN { printf "progress: step=%d loss=%.4f\n", i, (x-3)^2 + (y-3)^2 + 10/i + (a % 2 ? 0.05 : -0.05) }'
  sleep 0.4
  i=$((i + 1))
done
echo "---"
echo "score: $(( (x - 3) * (x - 3) + (y - 3) * (y - 3) ))"
SH
# Experiment 2: x=12 (score 82 against 10, clearly worse); 3: y=3 (9,
# better). The score is (x-3)^2 + (y-3)^2.
cat >"$L/propose.sh" <<'SH'
if [ "$RATCHET_EXPERIMENT" -eq 2 ]; then echo 12 > x.txt; echo "set x to 12"; else echo 3 > y.txt; echo "set y to 3"; fi
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

# Run the pruned change again, in full, by hand.
for bad in 1 3 9; do
  if msg=$("$RATCHET" rerun "$L" $bad 2>&1); then fail "rerun $bad was accepted: $msg"; fi
done
expect_contains "$("$RATCHET" rerun "$L" 1 2>&1)" "is the baseline" "rerun of the baseline refused"
expect_contains "$("$RATCHET" rerun "$L" 3 2>&1)" "is kept" "rerun of a keep refused"
msg=$("$RATCHET" rerun "$L" 2 2>&1) || fail "rerun 2 failed: $msg"
expect_contains "$msg" "runs again in full" "rerun accepted"
expect_contains "$("$RATCHET" rerun "$L" 2 2>&1)" "asked for already" "a second request is not queued"
expect_contains "$("$RATCHET" status "$L" 2>&1)" "reruns:     #2 asked for" "status shows the request"
out=$("$RATCHET" run "$L" --max-experiments 4 2>&1) || stopped_by_rule || fail "the rerun session failed: $out"
expect_eq "$(sql "$L" "SELECT proposer || ' ' || status FROM experiments WHERE id = 4")" "rerun discard" \
  "the rerun ran and was judged"
expect_contains "$(sql "$L" "SELECT description FROM experiments WHERE id = 4")" "rerun of #2: set x to 12" \
  "the rerun's description"
wall=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 4")
awk -v w="$wall" 'BEGIN { exit !(w >= 4) }' || fail "the rerun was not run in full: ${wall}s"
expect_eq "$(sql "$L" "SELECT count(*) FROM events WHERE kind = 'rerun_taken'")" "1" "served once"
status=$("$RATCHET" status "$L" 2>&1)
case "$status" in *"reruns:"*) fail "the served request is still listed: $status" ;; esac

# The ledger still verifies: curves are journaled like every run.
audit=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit failed: $audit"
finish
