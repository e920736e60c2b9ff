#!/usr/bin/env bash
# A webhook that hangs or fails never holds the loop up by more than
# [notify] timeout: the same 8-experiment loop is timed without
# notifications, against a server that never answers, and against one that
# answers 500 to everything (with retries). Messages go out on a background
# thread; at exit ratchet waits at most the timeout, then gives up and says so.
source "$(dirname "$0")/lib.sh"
TIMEOUT=2

make_loop() {  # make_loop DIR NOTIFY(yes|no)
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[loop]
tag = "timing"
[edit]
files = ["x.txt"]
protected = ["score.sh", "propose.sh"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 8
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
  if [ "$2" = yes ]; then
    printf '[notify]\ntimeout = "%ss"\nretries = 2\n[[notify.webhook]]\nurl_env = "SLACK_URL"\n' \
      "$TIMEOUT" >>"$1/ratchet.toml"
  fi
  echo 20 >"$1/x.txt"
  printf 'x=$(cat x.txt)\necho "---"\necho "score: $x"\n' >"$1/score.sh"
  printf 'x=$(cat x.txt); echo $((x - 1)) >x.txt; echo "lower x to $((x - 1))"\n' >"$1/propose.sh"
  git_init "$1"
}

# timed DIR: runs the loop; sets SECONDS_TAKEN (the whole command), EXIT_WAIT
# (from the session's end in the ledger to the process's exit: what the
# webhooks added at exit) and OUT.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  OUT=$("$RATCHET" run "$1" 2>&1) || stopped_by_rule || fail "run of $1 failed: $OUT"
  t1=$(date +%s.%N)
  SECONDS_TAKEN=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  EXIT_WAIT=$(awk -v e="$(sql "$1" "SELECT max(ended_at) FROM sessions")" -v b="$t1" 'BEGIN { printf "%.3f", b - e }')
}

make_loop "$WORK/plain" no
timed "$WORK/plain"
plain=$SECONDS_TAKEN
plain_wait=$EXIT_WAIT

start_webhook_server hang hang
make_loop "$WORK/hang" yes
SLACK_URL="http://127.0.0.1:$PORT/hook" timed "$WORK/hang"
hang=$SECONDS_TAKEN
hang_wait=$EXIT_WAIT
hang_out=$OUT

start_webhook_server fail fail
make_loop "$WORK/fail" yes
SLACK_URL="http://127.0.0.1:$PORT/hook" timed "$WORK/fail"
failing=$SECONDS_TAKEN
fail_wait=$EXIT_WAIT
fail_out=$OUT

echo "notify_timeout: 8 experiments, [notify] timeout ${TIMEOUT}s: without [notify] ${plain}s (exit ${plain_wait}s after the loop ended); hanging webhook ${hang}s (exit after ${hang_wait}s); failing webhook ${failing}s (exit after ${fail_wait}s)"
within() { awk -v v="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(v <= a + b) }'; }  # within V A B: V <= A + B
# At exit ratchet waits at most the timeout (plus the time to close).
within "$hang_wait" "$TIMEOUT" 0.5 || fail "hanging webhook: ratchet took ${hang_wait}s to exit after the loop"
within "$fail_wait" "$TIMEOUT" 0.5 || fail "failing webhook: ratchet took ${fail_wait}s to exit after the loop"
# And nothing during the loop waits for the network: the whole run is the
# plain run plus at most that wait (with room for a busy machine).
within "$hang" "$plain" "$(awk -v t="$TIMEOUT" 'BEGIN { print t + 1.5 }')" || fail "hanging webhook: ${hang}s vs ${plain}s without"
within "$failing" "$plain" "$(awk -v t="$TIMEOUT" 'BEGIN { print t + 1.5 }')" || fail "failing webhook: ${failing}s vs ${plain}s without"
expect_eq "$(sql "$WORK/hang" "SELECT count(*) FROM experiments")" 8 "the hanging webhook's loop ran all experiments"
expect_contains "$hang_out" "notify: gave up on" "the hanging webhook: ratchet says it gave up"
[ -s "$WORK/hang.log" ] || fail "the hanging server never got a request"
expect_contains "$fail_out" "notify: new_best to \$SLACK_URL: HTTP 500 after 3 attempts" "the failing webhook: retried, then reported"
expect_eq "$(head -3 "$WORK/fail.log" | python3 -c 'import json,sys; print(len(set(json.loads(l)["body"] for l in sys.stdin)))')" \
  1 "the first three requests are one message and its two retries"
finish
