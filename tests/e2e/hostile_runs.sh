#!/usr/bin/env bash
# Hostile runs and proposers, one per experiment of one loop. Each must be
# recorded with the right status while the loop goes on; after each, no
# process of the run is left and the tree is back at the incumbent.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
export HOSTILE_PIDS=$WORK/pgids HOSTILE_CHECKS=$WORK/checks
: >"$HOSTILE_PIDS"
: >"$HOSTILE_CHECKS"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["mode.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "2s"
grace = "1s"
log_limit = "256KB"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 11
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
echo "good 10" >"$L/mode.txt"
cat >"$L/run.sh" <<'SH'
# Records this run's process group, then misbehaves as mode.txt says.
echo "$(ps -o pgid= $$)" >> "$HOSTILE_PIDS"
set -- $(cat mode.txt)
case "$1" in
  good) echo "---"; echo "score: $2" ;;
  ignore_term) trap '' TERM; while :; do sleep 0.1; done ;;
  bg_child) sleep 300 & echo "---"; echo "score: $2"; exit 0 ;;
  endless) yes "spam spam spam spam spam spam spam spam" ;;
  nan) echo "---"; echo "score: nan" ;;
  nometric) echo "all done" ;;
  exit_after_good) echo "---"; echo "score: 0.001"; exit 3 ;;
esac
SH
cat >"$L/propose.sh" <<'SH'
# Before proposing: the previous run left no process and the tree is clean.
while read -r pgid; do
  if pgrep -g "$pgid" >/dev/null 2>&1; then
    echo "before #$RATCHET_EXPERIMENT: process group $pgid still alive: $(pgrep -g "$pgid" | tr '\n' ' ')" >> "$HOSTILE_CHECKS"
  fi
done < "$HOSTILE_PIDS"
if [ -n "$(git status --porcelain)" ]; then
  echo "before #$RATCHET_EXPERIMENT: tree not clean: $(git status --porcelain | tr '\n' ' ')" >> "$HOSTILE_CHECKS"
fi
case "$RATCHET_EXPERIMENT" in
  2) echo ignore_term > mode.txt ;;
  3) echo "bg_child 9" > mode.txt ;;
  4) echo endless > mode.txt ;;
  5) echo nan > mode.txt ;;
  6) echo nometric > mode.txt ;;
  7) echo exit_after_good > mode.txt ;;
  8) echo "echo score: 0" > run.sh ;;
  9) echo sneaky > other.txt ;;
  10) rm mode.txt ;;
  *) echo "good 8" > mode.txt ;;
esac
echo "case $RATCHET_EXPERIMENT"
SH
git_init "$L"

started=$SECONDS
out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
took=$((SECONDS - started))

status_of() { sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=$1"; }
expect_eq "$(status_of 1)" "keep: baseline" "#1 baseline"
expect_eq "$(status_of 2)" "timeout: killed at run.timeout (2s)" "#2 ignores SIGTERM"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=3")" "keep" "#3 background child keeps the pipe"
expect_eq "$(status_of 4)" "timeout: killed at run.timeout (2s)" "#4 prints without end"
expect_eq "$(status_of 5)" "crash: score is nan" "#5 prints NaN"
expect_contains "$(status_of 6)" "crash: no score in the output" "#6 prints no metric"
expect_eq "$(status_of 7)" "crash: exit 3 after printing score: 0.001" "#7 exits non-zero after a good metric"
expect_eq "$(status_of 8)" "out_of_scope: changed protected file run.sh" "#8 edits a protected file"
expect_eq "$(status_of 9)" "out_of_scope: created other.txt, which is not in edit.files" "#9 edits outside edit.files"
expect_contains "$(status_of 10)" "out_of_scope: deleted mode.txt" "#10 deletes an editable file"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=11")" "keep" "#11 the loop goes on"
# Out-of-scope candidates never ran: 11 experiments, 8 runs.
expect_eq "$(sql "$L" "SELECT count(*) FROM runs")" "8" "runs recorded"

# The background child did not hold the loop up, and was killed.
dur3=$(sql "$L" "SELECT CAST(finished_at - started_at AS INTEGER) FROM experiments WHERE id=3")
[ "$dur3" -lt 10 ] || fail "#3 took ${dur3}s: ratchet waited for the background child"
# The endless printer's log is capped, with the overflow noted and the tail kept.
size=$(stat -c %s "$L/.ratchet/runs/4/run.log")
[ "$size" -lt $((512 * 1024)) ] || fail "#4 run.log is $size bytes: not capped"
expect_contains "$(grep -c 'dropped' "$L/.ratchet/runs/4/run.log")" "1" "#4 overflow noted"

# No process of any run survives, and nothing was left dirty along the way.
while read -r pgid; do
  if pgrep -g "$pgid" >/dev/null; then fail "process group $pgid still alive"; fi
done <"$HOSTILE_PIDS"
expect_eq "$(cat "$HOSTILE_CHECKS")" "" "state before each proposal"
expect_eq "$(git -C "$L" status --porcelain)" "" "final tree clean"
expect_eq "$(cat "$L/mode.txt")" "good 8" "tree at the incumbent"
[ "$took" -lt 60 ] || fail "the loop took ${took}s"
finish
