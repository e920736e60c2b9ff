#!/usr/bin/env bash
# opencode (the version tests/agents/setup pins) as the proposer of a real
# loop, with the command line and environment of the autoresearch template,
# its Anthropic provider pointed at the scripted model server on 127.0.0.1
# (ANTHROPIC_BASE_URL): a bash call the loop denies (refused by the CLI), then
# an edit through its read and edit tools (kept); an API error 401
# (propose_failed with opencode's own words). Tokens and cost are the
# server's usage priced as opencode prices it, and the prompt is byte for
# byte the user message it sent.
source "$(dirname "$0")/lib.sh"
source "$RATCHET_HOME/tests/agents/cli_lib.sh"

PRICES='{"claude-sonnet-4-5":[3,15,0.3,3.75]}'  # opencode 1.18.33's price for it
export ANTHROPIC_API_KEY=sk-ratchet-test
PLAN=$WORK/plan.json
echo '{}' >"$PLAN"
start_server "$PLAN"
export ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT/v1

AGENT="$(template_command opencode)
$(template_key opencode model)
$(template_key opencode env)
timeout = \"120s\""
case "$AGENT" in *'"bash": "deny"'*'"title": {"disable": true}'*) ;; *) fail "template: $AGENT" ;; esac

L=$WORK/loop
toy_loop "$L" "$AGENT"
X=$L/.ratchet/work/2/x.txt  # the agent works in #2's working copy
cat >"$PLAN" <<JSON
{"experiments": {
 "2": [{"tool":"bash","input":{"command":"touch $L/.ratchet/work/2/pwned.txt","description":"try the shell"},"usage":{"input":1000,"output":50,"cache_read":300}},
       {"tool":"read","input":{"filePath":"$X"},"usage":{"input":1100,"output":40,"cache_write":200}},
       {"tool":"edit","input":{"filePath":"$X","oldString":"100","newString":"99"},"usage":{"input":1200,"output":30}},
       {"text":"Lowered it.\nDESCRIPTION: lower x from 100 to 99","usage":{"input":1300,"output":20}}],
 "3": [{"error":401,"message":"invalid x-api-key"}]
}}
JSON

out=$("$RATCHET" run "$L" --max-experiments 1 2>&1) || stopped_by_rule || fail "baseline run failed: $out"
"$RATCHET" prompt "$L" >"$WORK/prompt-2.md" || fail "ratchet prompt failed"
out=$("$RATCHET" run "$L" --max-experiments 3 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
echo "$out" | tail -3

expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep propose_failed" "statuses"
expect_eq "$(cat "$L/x.txt")" "99" "the kept edit is in the tree"
expect_eq "$(sql "$L" "SELECT description FROM experiments WHERE id=2")" "lower x from 100 to 99" "#2 description"
# (Had it run, pwned.txt in the working copy would make #2 out_of_scope.)
report tool-result 2 "unavailable tool 'bash'" || fail "#2: opencode did not refuse bash"
expect_eq "$(sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=3")" \
  "propose_failed: the agent exit 1: APIError: invalid x-api-key (HTTP 401) (log: .ratchet/runs/3/agent.log)" "#3 401"
for id in 2 3; do
  expect_eq "$(ledger_usage "$L" "$id")" "$(report usage "$id" "$PRICES")" "#$id tokens and cost"
done
expect_eq "$(report models 2)" "claude-sonnet-4-5" "#2 made no call on another model (no title generation)"
report prompt 2 >"$WORK/sent-2.md"
cmp -s "$WORK/prompt-2.md" "$WORK/sent-2.md" || fail "ratchet prompt differs from what opencode sent: $(diff "$WORK/prompt-2.md" "$WORK/sent-2.md" | head -5)"
expect_eq "$(survivors)" "" "processes left after the runs"
finish
