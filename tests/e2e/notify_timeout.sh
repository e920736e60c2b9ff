#!/usr/bin/env bash
# A webhook that hangs or fails never holds the loop up by more than
# [notify] timeout: the same 8-experiment loop is timed without
# notifications, against a server that never answers, and against one that
# answers 500 to everything (with retries). Messages go out on a background
# thread; at exit ratchet waits at most the timeout, then gives up and says so.
source "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=2

servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT
start_server() {  # start_server MODE: sets PORT
  python3 "$HERE/webhook_server.py" "$1" "$WORK/$1.port" "$WORK/$1.log" &
  servers+=("$!")
  wait_until 10 test -s "$WORK/$1.port" || fail "webhook server $1 did not start"
  PORT=$(cat "$WORK/$1.port")
}

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

# timed DIR: runs the loop, sets SECONDS_TAKEN and OUT.
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  OUT=$("$RATCHET" run "$1" 2>&1) || fail "run of $1 failed: $OUT"
  t1=$(date +%s.%N)
  SECONDS_TAKEN=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

make_loop "$WORK/plain" no
timed "$WORK/plain"
plain=$SECONDS_TAKEN

start_server hang
make_loop "$WORK/hang" yes
SLACK_URL="http://127.0.0.1:$PORT/hook" timed "$WORK/hang"
hang=$SECONDS_TAKEN
hang_out=$OUT

start_server fail
make_loop "$WORK/fail" yes
SLACK_URL="http://127.0.0.1:$PORT/hook" timed "$WORK/fail"
failing=$SECONDS_TAKEN
fail_out=$OUT

echo "notify_timeout: loop of 8 experiments: ${plain}s without [notify], ${hang}s with a hanging webhook, ${failing}s with a failing one ([notify] timeout ${TIMEOUT}s)"
for case in "hang $hang" "fail $failing"; do
  set -- $case
  awk -v t="$2" -v p="$plain" -v limit="$TIMEOUT" 'BEGIN { exit !(t - p <= limit + 1.0) }' ||
    fail "$1: the webhook delayed the loop by more than its timeout (${2}s vs ${plain}s)"
done
expect_eq "$(sql "$WORK/hang" "SELECT count(*) FROM experiments")" 8 "the hanging webhook's loop ran all experiments"
expect_contains "$hang_out" "notify: gave up on" "the hanging webhook: ratchet says it gave up"
[ -s "$WORK/hang.log" ] || fail "the hanging server never got a request"
expect_contains "$fail_out" "notify: new_best to \$SLACK_URL: HTTP 500 after 3 attempts" "the failing webhook: retried, then reported"
expect_eq "$(head -3 "$WORK/fail.log" | python3 -c 'import json,sys; print(len(set(json.loads(l)["body"] for l in sys.stdin)))')" \
  1 "the first three requests are one message and its two retries"
finish
