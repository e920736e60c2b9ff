#!/usr/bin/env bash
# [notify] on the real binary, against a local HTTP server: a Slack-style
# webhook gets {"text": ...} for each new best and for the stop; a generic
# one gets the event as JSON with the bearer token from the environment;
# the circuit breaker and a failed baseline are their own events; and a URL
# written into ratchet.toml is refused.
source "$(dirname "$0")/lib.sh"

# make_loop DIR SCORE_SH STOP_LINES: x.txt scored by score.sh, a script
# proposer that lowers x by one, and two webhooks.
make_loop() {
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[loop]
tag = "hooks"
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
$3
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
[notify]
timeout = "2s"
retries = 1
[[notify.webhook]]
url_env = "SLACK_URL"
[[notify.webhook]]
url_env = "HOOK_URL"
format = "json"
token_env = "HOOK_TOKEN"
TOML
  echo 10 >"$1/x.txt"
  printf '%s\n' "$2" >"$1/score.sh"
  printf 'x=$(cat x.txt); echo $((x - 1)) >x.txt; echo "lower x to $((x - 1))"\n' >"$1/propose.sh"
  git_init "$1"
}

start_webhook_server ok slack
SLACK_URL="http://127.0.0.1:$PORT/services/T0/B0/secret"
start_webhook_server ok hook
HOOK_URL="http://127.0.0.1:$PORT/ratchet"
export SLACK_URL HOOK_URL HOOK_TOKEN=tok-s3cret

# New bests and the stop.
L=$WORK/loop
make_loop "$L" 'x=$(cat x.txt); echo "---"; echo "score: $(( (x - 7) * (x - 7) ))"' "max_experiments = 6"
out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "run failed: $out"
keeps=$(sql "$L" "SELECT count(*) FROM experiments WHERE status='keep' AND id > 1")
expect_eq "$keeps" 3 "three new bests (10 -> 7, then worse)"
slack=$(python3 -c 'import json,sys; [print(json.loads(json.loads(l)["body"])["text"]) for l in open(sys.argv[1])]' "$WORK/slack.log")
expect_eq "$(grep -c 'new best' <<<"$slack")" "$keeps" "one Slack message per new best"
expect_contains "$slack" "ratchet hooks: new best #2 score 4 (was 9): lower x to 9" "the first new best"
expect_contains "$slack" "ratchet hooks: stopped: reached stop.max_experiments (6); best #4 score 0: lower x to 7" "the stop"
expect_eq "$(python3 -c 'import json,sys; print(sorted(set(json.loads(l)["path"] for l in open(sys.argv[1]))))' "$WORK/slack.log")" \
  "['/services/T0/B0/secret']" "the Slack URL's path"
# The generic hook: the event as JSON, with the bearer token.
events=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); b = json.loads(r["body"])
    print(b["event"], b.get("experiment", b.get("best", {})).get("id"), b.get("previous_best"), r["auth"], r["type"])
' "$WORK/hook.log")
expect_eq "$events" "new_best 2 9.0 Bearer tok-s3cret application/json
new_best 3 4.0 Bearer tok-s3cret application/json
new_best 4 1.0 Bearer tok-s3cret application/json
stop 4 None Bearer tok-s3cret application/json" "generic JSON events"
# The secrets were never written anywhere ratchet keeps.
grep -rq "tok-s3cret\|B0/secret" "$L/ratchet.toml" "$L/.ratchet" && fail "a secret reached the loop's files"

# The circuit breaker: every proposal after the baseline fails.
: >"$WORK/hook.log"
B=$WORK/breaker
make_loop "$B" 'echo "---"; echo "score: 1"' "consecutive_failures = 2"
echo 'exit 1' >"$B/propose.sh" && git -C "$B" commit -qam "failing proposer"
"$RATCHET" run "$B" >/dev/null 2>&1 || stopped_by_rule || fail "breaker run failed"
expect_eq "$(python3 -c 'import json,sys; [print(json.loads(json.loads(l)["body"])["event"]) for l in open(sys.argv[1])]' "$WORK/hook.log")" \
  "circuit_breaker" "the breaker is its own event"
expect_contains "$(tail -1 "$WORK/hook.log")" "circuit breaker: 2 failed experiments in a row" "the breaker's reason"

# A baseline that crashes.
: >"$WORK/hook.log"
C=$WORK/crash
make_loop "$C" 'echo boom >&2; exit 3' "max_experiments = 5"
"$RATCHET" run "$C" >/dev/null 2>&1 || true
expect_eq "$(python3 -c 'import json,sys; [print(json.loads(json.loads(l)["body"])["event"]) for l in open(sys.argv[1])]' "$WORK/hook.log")" \
  "baseline_failed
stop" "baseline failure, then the stop"
expect_contains "$(head -1 "$WORK/hook.log")" "the baseline failed (crash: exit 3" "the crash's reason"

# Secrets stay out of ratchet.toml; unset variables are named.
S=$WORK/secret
make_loop "$S" 'echo "---"; echo "score: 1"' "max_experiments = 2"
sed -i 's#^url_env = "SLACK_URL"#url = "https://hooks.example.com/x"#' "$S/ratchet.toml"
git -C "$S" commit -qam "url in the file"
set +e
out=$("$RATCHET" run "$S" 2>&1)
code=$?
set -e
expect_eq "$code" 2 "a URL in ratchet.toml: exit code"
expect_contains "$out" "a webhook's url is a secret and ratchet.toml is committed" "a URL in ratchet.toml is refused"
set +e
out=$(env -u HOOK_TOKEN "$RATCHET" run "$L" 2>&1)
set -e
expect_contains "$out" "the environment variable HOOK_TOKEN is not set" "an unset variable is named"
finish
