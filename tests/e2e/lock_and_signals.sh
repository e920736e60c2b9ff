#!/usr/bin/env bash
# One `ratchet run` per loop at a time; Ctrl-C once finishes the current
# experiment then stops; twice kills the run, marks it interrupted and
# restores the tree.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
export GATE_DIR=$WORK/gates
mkdir -p "$GATE_DIR"
cat >"$L/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "60s"
[metric]
name = "score"
goal = "min"
[sandbox]
writable = ["$GATE_DIR"]
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
echo 10 >"$L/x.txt"
# Each run announces itself (with its sandbox's pid namespace), then waits
# (up to 30 s) until the test opens its gate: the test decides when a run
# ends.
cat >"$L/run.sh" <<'SH'
readlink /proc/self/ns/pid > "$GATE_DIR/pidns-$RATCHET_EXPERIMENT"
touch "$GATE_DIR/started-$RATCHET_EXPERIMENT"
i=0
while [ ! -e "$GATE_DIR/open-$RATCHET_EXPERIMENT" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
echo "---"
echo "score: $(cat x.txt)"
SH
cat >"$L/propose.sh" <<'SH'
echo $(( $(cat x.txt) - 1 )) > x.txt
echo "decrement"
SH
git_init "$L"
started() { [ -e "$GATE_DIR/started-$1" ]; }

# Session 1: baseline, then #2 is held running.
"$RATCHET" run "$L" >"$WORK/run1.log" 2>&1 &
pid=$!
touch "$GATE_DIR/open-1"
wait_until 30 started 2 || fail "#2 never started"

# A second run is refused, naming the holder.
set +e
out=$("$RATCHET" run "$L" 2>&1)
code=$?
set -e
[ "$code" -ne 0 ] || fail "second run was not refused"
expect_contains "$out" "(pid $pid)" "lock message names the holder"
expect_eq "$(echo "$out" | wc -l)" "1" "lock message is one line"

# The live status shows what is running.
expect_contains "$("$RATCHET" status "$L")" "running:    pid $pid, #2 running" "status while running"

# Ctrl-C once: #2 finishes, then the loop stops.
kill -INT "$pid"
touch "$GATE_DIR/open-2"
set +e
wait "$pid"
code=$?
set -e
expect_eq "$code" "130" "exit code after Ctrl-C"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM experiments")" "keep keep" "#2 finished"
expect_contains "$(cat "$WORK/run1.log")" "stopped: stopped by the user (Ctrl-C)" "stop reason"
expect_eq "$(cat "$L/x.txt")" "9" "kept #2"

# Session 2: #3 is held running; Ctrl-C twice kills it.
"$RATCHET" run "$L" >"$WORK/run2.log" 2>&1 &
pid=$!
wait_until 30 started 3 || fail "#3 never started"
hold_pidns "$(cat "$GATE_DIR/pidns-3")" || fail "no process found in #3's pid namespace"
kill -INT "$pid"
# A person presses twice, not within microseconds (two signals sent at once
# may arrive as one).
announced() { grep -q "will stop after this experiment" "$WORK/run2.log"; }
wait_until 10 announced || fail "first Ctrl-C not announced"
kill -INT "$pid"
set +e
wait "$pid"
code=$?
set -e
expect_eq "$code" "130" "exit code after Ctrl-C twice"
expect_eq "$(sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=3")" \
  "interrupted: stopped by the user during the run" "#3 interrupted"
expect_eq "$(cat "$L/x.txt")" "9" "tree restored to the incumbent"
expect_eq "$(git -C "$L" status --porcelain)" "" "tree clean"
expect_contains "$(cat "$WORK/run2.log")" "stopping now" "second Ctrl-C announced"
# The waiting run.sh of #3 is gone, with everything in its sandbox.
ns=$(cat "$GATE_DIR/pidns-3")
[ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/pid)" ] || fail "#3 did not run in a pid namespace of its own: '$ns'"
if in_pidns "$ns"; then fail "the run of #3 outlived the interrupt"; fi
finish
