#!/usr/bin/env bash
# Parallel workers: with [run] workers = 2 two experiments are in flight at
# once, each with its own slot (RATCHET_SLOT, slot_env) and its own working
# copy, and a script proposer is shown the others in flight
# (RATCHET_IN_FLIGHT). `kill -9` of ratchet while two are in flight leaves
# no process of that session; the next `ratchet run` marks both interrupted
# (none lost, none run twice), the branch only moves forward, the ledger
# audits clean, and the branch holds one commit per keep.
source "$(dirname "$0")/lib.sh"

W=$WORK/loop
mkdir -p "$W/x"
export GATE_DIR=$WORK/gates
mkdir -p "$GATE_DIR"
cat >"$W/ratchet.toml" <<TOML
[loop]
tag = "par"
[edit]
files = ["x/*.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "90s"
workers = 2
slots = ["a", "b"]
slot_env = "WORKER_NAME"
[metric]
name = "score"
goal = "max"
[stop]
max_experiments = 8
[sandbox]
writable = ["$GATE_DIR"]
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
echo 0 >"$W/x/0.txt"
# Each run says where it is (slot, working copy, pid namespace), then waits
# (up to 60 s) until the test opens its gate, or all gates: the test decides
# when a run ends. Its score is the largest number in x/, so every
# experiment beats the incumbent it started from and the ones before it.
cat >"$W/run.sh" <<'SH'
e=$RATCHET_EXPERIMENT
echo "$RATCHET_SLOT $WORKER_NAME" > "$GATE_DIR/slot-$e"
pwd > "$GATE_DIR/cwd-$e"
readlink /proc/self/ns/pid > "$GATE_DIR/pidns-$e"
touch "$GATE_DIR/started-$e"
i=0
while [ ! -e "$GATE_DIR/open-$e" ] && [ ! -e "$GATE_DIR/open-all" ] && [ $i -lt 1200 ]; do
  sleep 0.05
  i=$((i + 1))
done
echo "---"
echo "score: $(cat x/*.txt | sort -n | tail -1)"
SH
# Every proposal adds its own file: winners never conflict when rebased.
cat >"$W/propose.sh" <<'SH'
cp "$RATCHET_IN_FLIGHT" "$GATE_DIR/in-flight-$RATCHET_EXPERIMENT"
echo "$RATCHET_EXPERIMENT" > "x/$RATCHET_EXPERIMENT.txt"
echo "add x/$RATCHET_EXPERIMENT.txt"
SH
git_init "$W"
start=$(git -C "$W" rev-parse HEAD)

started() { [ -e "$GATE_DIR/started-$1" ]; }
both_started() { started "$1" && started "$2"; }
phase_of() { sql "$W" "SELECT phase FROM experiments WHERE id = $1" 2>/dev/null; }
# lock_held_by_child JOB: .ratchet/lock names a process whose parent is JOB.
lock_held_by_child() {
  local p
  p=$(cat "$W/.ratchet/lock" 2>/dev/null) && [ -n "$p" ] &&
    [ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = "$1" ]
}
# descendants PID: "pid starttime" of every process below PID.
descendants() {
  local c t
  for c in $(pgrep -P "$1" || true); do
    t=$(awk '{print $22}' "/proc/$c/stat" 2>/dev/null || true)
    if [ -n "$t" ]; then echo "$c $t"; fi
    descendants "$c"
  done
}
# none_alive FILE: no process listed in FILE ("pid starttime") still lives.
none_alive() {
  local p t
  while read -r p t; do
    [ "$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null || true)" = "$t" ] && return 1
  done <"$1"
  return 0
}

# Session 1: the baseline alone, then two experiments in flight at once.
# (In a subshell that records ratchet's exit, so the kill is not reported
# as the test's own job dying.)
{
  code=0
  "$RATCHET" run "$W" || code=$?
  echo "$code" >"$WORK/run1.code"
} >"$WORK/run1.log" 2>&1 &
job=$!
wait_until 30 lock_held_by_child "$job" || fail "ratchet's pid never appeared in .ratchet/lock"
rpid=$(cat "$W/.ratchet/lock")
wait_until 30 started 1 || fail "the baseline never started"
touch "$GATE_DIR/open-1"
wait_until 60 both_started 2 3 || fail "#2 and #3 were never in flight together: $(ls "$GATE_DIR")"
# Neither gate is open: both are running at this moment.
expect_eq "$(phase_of 2) $(phase_of 3)" "running running" "#2 and #3 both running"
slots="$(cat "$GATE_DIR/slot-2") / $(cat "$GATE_DIR/slot-3")"
case "$slots" in
  "a a / b b" | "b b / a a") ;;
  *) fail "#2 and #3 should have slots a and b (RATCHET_SLOT and slot_env), got: $slots" ;;
esac
expect_eq "$(cat "$GATE_DIR/cwd-2")" "$W/.ratchet/work/2" "#2 runs in its own working copy"
expect_eq "$(cat "$GATE_DIR/cwd-3")" "$W/.ratchet/work/3" "#3 runs in its own working copy"
expect_eq "$(sql "$W" "SELECT count(DISTINCT worker) FROM experiments WHERE id IN (2, 3)")" 2 "two workers in the ledger"

# #2 ends (a keep); #4 takes its worker and slot, beside #3.
touch "$GATE_DIR/open-2"
wait_until 60 started 4 || fail "#4 never started after #2 ended"
expect_eq "$(sql "$W" "SELECT status FROM experiments WHERE id = 2")" "keep" "#2 kept"
expect_eq "$(cat "$GATE_DIR/slot-4")" "$(cat "$GATE_DIR/slot-2")" "#4 has the slot #2 freed"
expect_eq "$(phase_of 3) $(phase_of 4)" "running running" "#3 and #4 in flight"
# The script that proposed #4 was shown #3, in flight beside it, and not
# the finished #2.
flying=$(tr -d '\n' <"$GATE_DIR/in-flight-4")
case "$flying" in
  *'"description": "add x/3.txt"'*) ;;
  *) fail "#4's proposer should see #3 in RATCHET_IN_FLIGHT, got: $flying" ;;
esac
case "$flying" in
  *'x/2.txt'*) fail "#4's proposer should not see the finished #2 as in flight: $flying" ;;
esac
old_tip=$(git -C "$W" rev-parse refs/heads/ratchet/par)
for id in 3 4; do
  hold_pidns "$(cat "$GATE_DIR/pidns-$id")" || fail "no process found in #$id's pid namespace"
done

# kill -9 ratchet while both are in flight.
descendants "$rpid" >"$WORK/session1-procs"
[ -s "$WORK/session1-procs" ] || fail "ratchet $rpid had no child processes to check"
kill -9 "$rpid"
wait "$job" || true
expect_eq "$(cat "$WORK/run1.code")" 137 "ratchet killed"
wait_until 10 none_alive "$WORK/session1-procs" ||
  fail "processes of the killed session remain: $(while read -r p t; do ps -o pid=,args= -p "$p"; done <"$WORK/session1-procs" | tr '\n' ';')"
for id in 3 4; do
  ns=$(cat "$GATE_DIR/pidns-$id")
  [ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/pid)" ] || fail "#$id did not run in a pid namespace of its own: '$ns'"
  if in_pidns "$ns"; then fail "the run of #$id outlived the killed ratchet"; fi
done

# Session 2: resumes; every later run ends at once.
touch "$GATE_DIR/open-all"
out=$("$RATCHET" run "$W" 2>&1) || stopped_by_rule || fail "the second session failed: $out"
expect_contains "$out" "#3 was interrupted" "recovery names #3"
expect_contains "$out" "#4 was interrupted" "recovery names #4"

# No experiment lost or duplicated; the cut-off ones are interrupted, not re-run.
expect_eq "$(sql "$W" "SELECT min(id) || ' ' || max(id) || ' ' || count(*) || ' ' || count(DISTINCT id) FROM experiments")" \
  "1 8 8 8" "ids contiguous, each once"
expect_eq "$(sql "$W" "SELECT count(*) FROM experiments WHERE status = '' OR phase != 'done'")" 0 "every experiment decided and done"
for id in 3 4; do
  expect_eq "$(sql "$W" "SELECT status || ': ' || reason FROM experiments WHERE id = $id")" \
    "interrupted: ratchet stopped while the experiment was running" "#$id cut off"
  expect_eq "$(git -C "$W" rev-parse -q --verify "refs/ratchet/tried/$id" || true)" \
    "$(sql "$W" "SELECT candidate_commit FROM experiments WHERE id = $id")" "#$id's tried commit kept"
done
expect_eq "$(sql "$W" "SELECT count(*) FROM runs WHERE experiment_id IN (3, 4)")" 0 "#3 and #4 not re-run"
expect_eq "$(sql "$W" "SELECT count(*) FROM (SELECT experiment_id FROM runs GROUP BY experiment_id HAVING count(*) > 1)")" 0 \
  "no experiment ran twice"
# Session 2's pairs end in any order: one that ends after a higher-numbered
# keep is a discard, else a keep.
expect_eq "$(sql "$W" "SELECT group_concat(status, ' ') FROM experiments WHERE id <= 4")" \
  "keep keep interrupted interrupted" "statuses of session 1"
expect_eq "$(sql "$W" "SELECT count(*) FROM experiments WHERE id > 4 AND status NOT IN ('keep', 'discard')")" 0 \
  "session 2's experiments kept or discarded"
expect_eq "$(sql "$W" "SELECT status FROM experiments WHERE id = 8")" "keep" "#8, the best, kept"
expect_eq "$(sql "$W" "SELECT count(*) FROM sessions")" 2 "two sessions"

# The branch only moved forward; the ledger audits clean.
new_tip=$(git -C "$W" rev-parse refs/heads/ratchet/par)
git -C "$W" merge-base --is-ancestor "$old_tip" "$new_tip" || fail "branch moved back: $old_tip is not before $new_tip"
out=$("$RATCHET" audit "$W" --no-rescore 2>&1) || fail "audit: $out"

# The kept history: one commit per keep (the baseline is the start), in
# order, the tip the last keep, holding every kept file.
expect_eq "$(git -C "$W" log --reverse --format=%s "$start..$new_tip" | sed 's/^ratchet #\([0-9]*\):.*/\1/' | tr '\n' ' ')" \
  "$(sql "$W" "SELECT group_concat(id, ' ') FROM (SELECT id FROM experiments WHERE status = 'keep' AND baseline = 0 ORDER BY finished_at)") " \
  "one commit per keep, in the order kept"
expect_eq "$(git -C "$W" rev-list --merges --count "$start..$new_tip")" 0 "no merge commits"
expect_eq "$new_tip" "$(sql "$W" "SELECT candidate_commit FROM experiments WHERE status = 'keep' ORDER BY finished_at DESC LIMIT 1")" \
  "tip is the last keep"
expect_eq "$(git -C "$W" ls-tree --name-only "$new_tip" x/ | tr '\n' ' ')" \
  "$(sql "$W" "SELECT group_concat('x/' || n || '.txt', ' ') FROM (SELECT 0 AS n UNION ALL SELECT id FROM experiments WHERE status = 'keep' AND baseline = 0 ORDER BY 1)") " \
  "the tip holds every kept file"
expect_eq "$(git -C "$W" status --porcelain)" "" "tree clean"
expect_eq "$(ls -A "$W/.ratchet/work" 2>/dev/null)" "" "no working copy left"
finish
