#!/usr/bin/env bash
# `ratchet run` exits with one status per outcome (README.md, "Exit status"):
# each loop here ends one way, and its exit status and stop line are checked.
# 130 (Ctrl-C) is checked in lock_and_signals.sh, 0 for a busy loop with
# --if-idle in schedule.sh.
source "$(dirname "$0")/lib.sh"

# make_loop NAME SCORE_SH PROPOSE_SH [STOP_KEYS]: a toy loop: the score is x.
make_loop() {
  local dir=$WORK/$1
  mkdir -p "$dir"
  cat >"$dir/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["score.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
${4:-max_experiments = 3}
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
  echo 5 >"$dir/x.txt"
  printf '%s\n' "$2" >"$dir/score.sh"
  printf '%s\n' "$3" >"$dir/propose.sh"
  git_init "$dir"
}

# run_loop NAME: sets $code and $out from `ratchet run` on $WORK/NAME.
run_loop() {
  code=0
  out=$("$RATCHET" run "$WORK/$1" 2>&1) || code=$?
}

score='echo "---"; echo "score: $(cat x.txt)"'
down='echo $(( $(cat x.txt) - 1 )) > x.txt; echo "x down by one"'

make_loop target "$score" "$down" $'max_experiments = 20\ntarget = 3'
run_loop target
expect_eq "$code" 0 "target reached: exit status"
expect_contains "$out" "stopped: reached stop.target 3" "target reached: stop line"

make_loop rule "$score" "$down" "max_experiments = 2"
run_loop rule
expect_eq "$code" 3 "max_experiments: exit status"
expect_contains "$out" "stopped: reached stop.max_experiments (2)" "max_experiments: stop line"

make_loop baseline 'echo "no score here"; exit 1' "$down"
run_loop baseline
expect_eq "$code" 4 "the baseline failed: exit status"
expect_eq "$(sql "$WORK/baseline" "SELECT count(*) FROM experiments")" 1 \
  "the baseline failed: nothing ran after it"

make_loop breaker "$score" 'echo "no idea" >&2; exit 1' $'max_experiments = 20\nconsecutive_failures = 2'
run_loop breaker
expect_eq "$code" 5 "circuit breaker: exit status"
expect_contains "$out" "circuit breaker" "circuit breaker: stop line"

make_loop config "$score" "$down"
printf '[loop]\nno_such_key = 1\n' >>"$WORK/config/ratchet.toml"
git -C "$WORK/config" commit -qam "a bad key"
run_loop config
expect_eq "$code" 2 "configuration error: exit status"
expect_contains "$out" "no_such_key" "configuration error: the key is named"
[ ! -e "$WORK/config/.ratchet/ledger.db" ] || fail "configuration error: a ledger was written"

# Engine error: the ledger cannot be read any more (its first page
# scribbled over after a first session).
make_loop engine "$score" "$down" "max_experiments = 2"
run_loop engine
expect_eq "$code" 3 "engine error, first session: exit status"
python3 - "$WORK/engine/.ratchet/ledger.db" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(100)
    f.write(b"\xa5" * (4096 - 100))
PY
rm -f "$WORK/engine/.ratchet/ledger.db-wal" "$WORK/engine/.ratchet/ledger.db-shm"
run_loop engine
expect_eq "$code" 1 "engine error: exit status"
expect_contains "$out" "ledger" "engine error: the ledger is named"
finish
