#!/usr/bin/env bash
# Codex itself (the version tests/agents/setup pins) as the proposer of a
# real loop, with the command line of the autoresearch template (the only
# change: its provider's base_url is the scripted model server on
# 127.0.0.1), speaking the Responses API. Each experiment is one
# conversation: an edit through apply_patch (kept), a patch of a protected
# file (out_of_scope), a shell call the loop disallows (refused by the CLI;
# the patch after it kept), API errors 401, 429, 500 and 529
# (propose_failed with Codex's own words), a stream that fails twice and
# then recovers ("Reconnecting...": kept, not a failure), and a hang past the
# timeout (no process left, the tokens up to it counted). The ledger's tokens
# are the server's usage, and the token stop fires at that count.
source "$(dirname "$0")/lib.sh"
source "$RATCHET_HOME/tests/agents/cli_lib.sh"

export OPENAI_API_KEY=sk-ratchet-test
PLAN=$WORK/plan.json
echo '{}' >"$PLAN"
start_server "$PLAN"

# The template's command, checked here (a fail inside $(...) would not
# count). ratchet's working copies have no .git, and Codex refuses to run
# outside a git repository unless told: the template must say
# --skip-git-repo-check (added here when it does not, so that the rest is
# still tested).
CODEX_CMD=$(template_command codex)
case "$CODEX_CMD" in *'"--sandbox", "workspace-write"'*'"-"]') ;; *) fail "template command: $CODEX_CMD" ;; esac
case "$CODEX_CMD" in
  *'"--skip-git-repo-check"'*) ;;
  *)
    fail "the template's Codex command lacks \"--skip-git-repo-check\" (the working copy has no .git)"
    CODEX_CMD="${CODEX_CMD%\"-\"]}\"--skip-git-repo-check\", \"-\"]" ;;
esac

# agent_table TIMEOUT: the template's command, pointed at the server.
agent_table() {
  printf '%s\nmodel = "gpt-5.5"\ntimeout = "%s"\n' \
    "${CODEX_CMD%\"-\"]}\"-c\", 'model_providers.openai-r.base_url=\"http://127.0.0.1:$PORT/v1\"', \"-\"]" "$1"
}

patch() {  # patch FILE OLD NEW: an apply_patch call
  printf '{"custom":"apply_patch","input":"*** Begin Patch\\n*** Update File: %s\\n@@\\n-%s\\n+%s\\n*** End Patch\\n"' "$1" "$2" "$3"
}

L=$WORK/loop
toy_loop "$L" "$(agent_table 90s)" "tokens = 11000"
cat >"$PLAN" <<JSON
{"experiments": {
 "2": [$(patch x.txt 100 99), "usage":{"input":1500,"output":60,"cache_read":500}},
       {"text":"Lowered it.\nDESCRIPTION: lower x from 100 to 99","usage":{"input":1700,"output":30,"cache_read":100}}],
 "3": [$(patch score.sh 'x=$(cat x.txt)' 'x=3')},
       {"text":"DESCRIPTION: make the scorer kinder"}],
 "4": [{"tool":"exec_command","input":{"cmd":"touch pwned.txt"}},
       $(patch x.txt 99 98)},
       {"text":"DESCRIPTION: lower x from 99 to 98"}],
 "5": [{"error":401,"message":"invalid api key"}],
 "6": [{"error":429,"message":"rate limited"}],
 "7": [{"error":500,"message":"internal trouble"}],
 "8": [{"error":529,"message":"overloaded"}],
 "9": [$(patch x.txt 98 97), "fail_first":[{"error":500},{"error":500},{"error":500}]},
       {"text":"DESCRIPTION: lower x from 98 to 97"}]
}}
JSON
node -e "JSON.parse(require('fs').readFileSync('$PLAN','utf8'))" || fail "the plan is not JSON"

out=$("$RATCHET" run "$L" --max-experiments 1 2>&1) || stopped_by_rule || fail "baseline run failed: $out"
"$RATCHET" prompt "$L" >"$WORK/prompt-2.md" || fail "ratchet prompt failed"
out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
echo "$out" | tail -3

status_of() { sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=$1"; }
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep out_of_scope keep propose_failed propose_failed propose_failed propose_failed keep" "statuses"
expect_eq "$(cat "$L/x.txt")" "97" "the kept patches are in the tree"
expect_eq "$(sql "$L" "SELECT description FROM experiments WHERE id=2")" "lower x from 100 to 99" "#2 description"
expect_eq "$(status_of 3)" "out_of_scope: changed protected file score.sh" "#3 protected file"
# (Had it run, pwned.txt in the working copy would make #4 out_of_scope.)
report tool-result 4 "unsupported call: exec_command" || fail "#4: Codex did not refuse the shell"
# Each API error in Codex's own words; the retries are the template's.
expect_contains "$(status_of 5)" "propose_failed: the agent failed: unexpected status 401 Unauthorized: invalid api key" "#5 401"
expect_contains "$(status_of 5)" "(turn.failed, HTTP 401; exit 1) (log: .ratchet/runs/5/agent.log)" "#5 401 status"
expect_contains "$(status_of 6)" "exceeded retry limit, last status: 429 Too Many Requests" "#6 429"
expect_contains "$(status_of 6)" "(turn.failed, HTTP 429; exit 1)" "#6 429 status"
expect_contains "$(status_of 7)" "the agent failed: We’re currently experiencing high demand" "#7 500"
expect_contains "$(status_of 8)" "unexpected status 529" "#8 529"
expect_contains "$(status_of 8)" "(turn.failed, HTTP 529; exit 1)" "#8 529 status"
expect_eq "$(report calls 8)" "9" "#8: the template's retries (3 requests x 3 streams)"
# The stream failed, Codex reconnected and went on: a kept edit.
grep -q '"type":"error","message":"Reconnecting... 1/2' "$L/.ratchet/runs/9/agent.log" || fail "#9 did not reconnect"
expect_eq "$(sql "$L" "SELECT status || ' ' || description FROM experiments WHERE id=9")" "keep lower x from 98 to 97" "#9 recovered"

total=0
for id in 2 3 4 5 6 7 8 9; do
  server=$(report usage "$id")
  expect_eq "$(ledger_usage "$L" "$id")" "${server% *} 0.000000" "#$id tokens (Codex reports no cost)"
  set -- $server
  total=$((total + $1 + $2))
done
expect_contains "$out" "stopped: used $total tokens of stop.tokens 11000" "the token stop at the real count"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" "9" "the token stop fired after #9, not before"

report prompt 2 >"$WORK/sent-2.md"
cmp -s "$WORK/prompt-2.md" "$WORK/sent-2.md" || fail "ratchet prompt differs from what Codex sent: $(diff "$WORK/prompt-2.md" "$WORK/sent-2.md" | head -5)"
for id in 2 3 4 5 6 7 8 9; do
  report prompt "$id" >"$WORK/sent.md"
  cmp -s "$L/.ratchet/runs/$id/prompt.md" "$WORK/sent.md" || fail "#$id: prompt.md differs from what Codex sent"
done
expect_eq "$(node -e "const l=require('fs').readFileSync('$SERVER_LOG','utf8').split('\n').filter(Boolean).map(JSON.parse).filter(e=>e.api);console.log([...new Set(l.map(e=>e.auth))].join(' '))")" \
  "Bearer sk-ratchet-test" "the API key Codex sent"

# A hang after one patch: stopped at the timeout, nothing left, and the
# tokens of the call before it (from Codex's session file) counted.
H=$WORK/hang
start_server "$PLAN" hang
toy_loop "$H" "$(agent_table 8s)"
cat >"$PLAN" <<JSON
{"experiments": {"2": [$(patch x.txt 100 99), "usage":{"input":1500,"output":60,"cache_read":200}},
                       {"hang":true}]}}
JSON
out=$("$RATCHET" run "$H" --max-experiments 2 2>&1) || stopped_by_rule || fail "hang run failed: $out"
reason=$(sql "$H" "SELECT status || ': ' || reason FROM experiments WHERE id=2")
expect_eq "${reason%% after*}" "propose_failed: the agent timed out" "the hang is a timeout"
server=$(report usage 2)
expect_eq "$(ledger_usage "$H" 2)" "${server% *} 0.000000" "the hung agent's tokens until the timeout"
expect_eq "$(cat "$H/x.txt")" "100" "the failed proposal's edit is undone"
wait_until 10 report hung-closed 2 || fail "the hung call's connection was never closed"
expect_eq "$(survivors)" "" "processes left after the runs"
finish
