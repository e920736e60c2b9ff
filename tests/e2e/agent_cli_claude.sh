#!/usr/bin/env bash
# Claude Code itself (the version tests/agents/setup pins) as the proposer of
# a real loop, with the command line of the autoresearch template, talking to
# a scripted model server on 127.0.0.1 (ANTHROPIC_BASE_URL). Each experiment
# is one conversation: an edit through the CLI's Read and Edit tools (kept),
# a Write to a protected file (out_of_scope), a Bash call the loop disallows
# (refused by the CLI; the edit after it kept), API errors 401, 429, 500 and
# 529 (propose_failed with the CLI's own words and status), a sub-agent on
# another model, a --max-budget-usd stop, and a hang past the agent's
# timeout (no process left, the spend up to it counted). The ledger's tokens
# and costs are the server's usage priced as Claude Code prices it, the cost
# stop fires at that spend, and `ratchet prompt` is byte for byte the user
# message the CLI sent.
source "$(dirname "$0")/lib.sh"
source "$RATCHET_HOME/tests/agents/cli_lib.sh"

# What Claude Code 2.1.332 charges, USD per million tokens (input, output,
# cache read, cache write): measured through its modelUsage costUSD. "sonnet"
# and "haiku" are these models in that version.
PRICES='{"claude-sonnet-5-5":[2,10,0.1,2.5],"claude-haiku-5-5":[0.1,0.5,0.01,0.125]}'

export ANTHROPIC_BASE_URL ANTHROPIC_API_KEY=sk-ratchet-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
PLAN=$WORK/plan.json
echo '{}' >"$PLAN"
start_server "$PLAN"
ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT

# The template's command, model and retry setting; a shorter retry and timeout.
AGENT="$(template_command claude)
model = \"sonnet\"
timeout = \"90s\"
env = { CLAUDE_CODE_MAX_RETRIES = \"1\" }"
case "$AGENT" in *'"--output-format", "stream-json", "--verbose"'*) ;; *) fail "template command: $AGENT" ;; esac

L=$WORK/loop
toy_loop "$L" "$AGENT" "cost_usd = 2.0"
# The agent works in experiment N's working copy, $L/.ratchet/work/N.
X=$L/x.txt
work() { echo "$L/.ratchet/work/$1"; }
read_x() { echo '{"tool":"Read","input":{"file_path":"'"$(work "$1")"'/x.txt"}'; }
edit_x() { echo '{"tool":"Edit","input":{"file_path":"'"$(work "$1")"'/x.txt","old_string":"'$2'","new_string":"'$3'"}'; }
cat >"$PLAN" <<JSON
{"experiments": {
 "2": [$(read_x 2), "usage":{"input":1200,"output":40,"cache_write":3000}},
       $(edit_x 2 100 99), "usage":{"input":300,"output":90,"cache_read":3000}},
       {"text":"Lowered it.\nHYPOTHESIS: nearer 3 scores lower\nDESCRIPTION: lower x from 100 to 99","usage":{"input":500,"output":20,"cache_read":3300,"cache_write":100}}],
 "3": [{"tool":"Read","input":{"file_path":"$(work 3)/score.sh"}},
       {"tool":"Write","input":{"file_path":"$(work 3)/score.sh","content":"echo ---; echo 'score: 0'\n"}},
       {"text":"DESCRIPTION: make the scorer kinder"}],
 "4": [{"tool":"Bash","input":{"command":"touch $(work 4)/pwned.txt","description":"try the shell"}},
       $(read_x 4)},
       $(edit_x 4 99 98)},
       {"text":"DESCRIPTION: lower x from 99 to 98"}],
 "5": [{"error":401,"message":"invalid x-api-key"}],
 "6": [{"error":429,"message":"rate limited, slow down"}],
 "7": [{"error":500,"message":"internal trouble"}],
 "8": [{"error":529,"message":"Overloaded"}],
 "9": [{"tool":"Agent","input":{"description":"read x","prompt":"SUBTASK-9: read x.txt and say its value","subagent_type":"Explore","model":"haiku","run_in_background":false},"usage":{"input":2000,"output":77}},
       $(read_x 9)},
       $(edit_x 9 98 97)},
       {"text":"DESCRIPTION: lower x from 98 to 97","usage":{"input":3000,"output":33}}],
 "10": [$(read_x 10), "usage":{"input":1000,"output":250000}},
        {"text":"DESCRIPTION: never reached"}]
},
"subagents": {"SUBTASK-9": [$(read_x 9), "usage":{"input":400,"output":11,"cache_read":50}},
                            {"text":"x is 98","usage":{"input":500,"output":12,"cache_write":20}}]}}
JSON
node -e "JSON.parse(require('fs').readFileSync('$PLAN','utf8'))" || fail "the plan is not JSON"

# The baseline alone, then the prompt the next experiment will get.
out=$("$RATCHET" run "$L" --max-experiments 1 2>&1) || stopped_by_rule || fail "baseline run failed: $out"
"$RATCHET" prompt "$L" >"$WORK/prompt-2.md" || fail "ratchet prompt failed"
out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
echo "$out" | tail -3

status_of() { sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=$1"; }
log_of() { echo "(log: .ratchet/runs/$1/agent.log)"; }
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep out_of_scope keep propose_failed propose_failed propose_failed propose_failed keep propose_failed" "statuses"
expect_eq "$(cat "$X")" "97" "the kept edits are in the tree"
expect_eq "$(sql "$L" "SELECT description FROM experiments WHERE id=2")" "lower x from 100 to 99" "#2 description"
expect_eq "$(sql "$L" "SELECT hypothesis FROM experiments WHERE id=2")" "nearer 3 scores lower" "#2 hypothesis"
expect_eq "$(status_of 3)" "out_of_scope: changed protected file score.sh" "#3 protected file"
# (Had it run, pwned.txt in the working copy would make #4 out_of_scope.)
report tool-result 4 "No such tool available: Bash" || fail "#4: the CLI did not refuse Bash"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=4")" "keep" "#4 the edit after the refused tool"
# Each API error in Claude Code's own words, with the HTTP status.
expect_eq "$(status_of 5)" "propose_failed: the agent failed: Invalid API key · Fix external API key (HTTP 401 authentication_error; exit 1) $(log_of 5)" "#5 401"
expect_contains "$(status_of 6)" "API Error: Request rejected (429) · rate limited, slow down (HTTP 429 rate_limit_error; exit 1)" "#6 429"
expect_contains "$(status_of 7)" "API Error: 500 internal trouble." "#7 500"
expect_contains "$(status_of 7)" "(HTTP 500 api_error; exit 1)" "#7 500 status"
expect_contains "$(status_of 8)" "API Error: 529 Overloaded." "#8 529"
expect_contains "$(status_of 8)" "(HTTP 529 overloaded_error; exit 1)" "#8 529 status"
expect_eq "$(report calls 8)" "2" "#8: one retry (CLAUDE_CODE_MAX_RETRIES=1)"
# The sub-agent asked for another model; its tokens and cost count.
expect_eq "$(report models 9 | sort | tr '\n' ' ')" "claude-haiku-5-5 claude-sonnet-5-5 " "#9 models"
expect_contains "$(cat "$L/.ratchet/runs/9/agent.json")" '"claude-haiku-5-5"' "#9 agent.json per model"
expect_eq "$(status_of 10)" "propose_failed: the agent failed: Reached maximum budget (\$2) (error_max_budget_usd; exit 1) $(log_of 10)" "#10 budget stop"

# Tokens and cost of every experiment: the server's usage, priced as the CLI prices it.
total=0
for id in 2 3 4 5 6 7 8 9 10; do
  server=$(report usage "$id" "$PRICES")
  expect_eq "$(ledger_usage "$L" "$id")" "$server" "#$id tokens and cost"
  total=$(awk -v a="$total" -v b="${server##* }" 'BEGIN { printf "%.6f", a + b }')
done
expect_contains "$out" "stopped: spent \$$(printf '%.2f' "$total") of stop.cost_usd \$2.00" "the cost stop at the real spend"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" "10" "the cost stop fired after #10, not before"

# The prompt: what `ratchet prompt` printed, what ratchet kept, and what the
# CLI sent as the user's message are the same bytes.
report prompt 2 >"$WORK/sent-2.md"
cmp -s "$WORK/prompt-2.md" "$WORK/sent-2.md" || fail "ratchet prompt differs from what Claude Code sent: $(diff "$WORK/prompt-2.md" "$WORK/sent-2.md" | head -5)"
for id in 2 3 4 5 6 7 8 9 10; do
  report prompt "$id" >"$WORK/sent.md"
  cmp -s "$L/.ratchet/runs/$id/prompt.md" "$WORK/sent.md" || fail "#$id: prompt.md differs from what Claude Code sent"
done

# The CLI ran with the loop's key, and a scratch home of each experiment's
# own: the sandbox's $HOME is the run folder's home/propose, and nothing of
# one experiment's home is in the next one's.
expect_eq "$(node -e "const l=require('fs').readFileSync('$SERVER_LOG','utf8').split('\n').filter(Boolean).map(JSON.parse).filter(e=>e.api);console.log([...new Set(l.map(e=>e.auth))].join(' '))")" \
  "sk-ratchet-test" "the API key the CLI sent"
grep -q '"memory_paths":{"auto":"/home/sandbox/.claude/' "$L/.ratchet/runs/2/agent.log" ||
  fail "Claude Code's memory folder is not in the sandbox's home: $(grep -o '"memory_paths":{[^}]*}' "$L/.ratchet/runs/2/agent.log")"
expect_eq "$(ls "$L/.ratchet/runs/2/home/propose/.claude/projects")" "$(work 2 | sed 's/[^A-Za-z0-9]/-/g')" "#2's memory folder in its own home"
expect_eq "$(ls "$L/.ratchet/runs/3/home/propose/.claude/projects")" "$(work 3 | sed 's/[^A-Za-z0-9]/-/g')" "nothing of #2 in #3's home"

# A hang: the server never answers the second call; the agent is stopped at
# its timeout, nothing of it is left, and what it spent until then counts.
H=$WORK/hang
toy_loop "$H" "${AGENT/timeout = \"90s\"/timeout = \"8s\"}"
cat >"$PLAN" <<JSON
{"experiments": {"2": [{"tool":"Read","input":{"file_path":"$H/.ratchet/work/2/x.txt"},"usage":{"input":2000,"output":77,"cache_write":500}},
                       {"hang":true}]}}
JSON
start_server "$PLAN" hang
ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT
out=$("$RATCHET" run "$H" --max-experiments 2 2>&1) || stopped_by_rule || fail "hang run failed: $out"
reason=$(sql "$H" "SELECT status || ': ' || reason FROM experiments WHERE id=2")
expect_eq "${reason%% after*}" "propose_failed: the agent timed out" "the hang is a timeout"
expect_eq "$(ledger_usage "$H" 2)" "$(report usage 2 "$PRICES")" "the hung agent's spend until the timeout"
wait_until 10 report hung-closed 2 || fail "the hung call's connection was never closed"
expect_eq "$(survivors)" "" "processes left after the runs"
finish
