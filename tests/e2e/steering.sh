#!/usr/bin/env bash
# Steering a running loop: `ratchet note` adds guidance that the next
# proposals see (recorded in the ledger with its time); `ratchet pause`
# holds the loop between experiments, `ratchet status` says so, and
# `ratchet resume` lets it go on.
source "$(dirname "$0")/lib.sh"
AGENTS=$RATCHET_HOME/tests/agents
export AGENT_LOG_DIR=$WORK/prompts

L=$WORK/steer
mkdir -p "$L"
cat >"$L/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["score.sh"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
$(sandbox_table "$AGENT_LOG_DIR")
[propose]
kind = "agent"
[propose.agent]
command = ["sh", "$AGENTS/standin.sh"]
timeout = "10s"
TOML
echo 100 >"$L/x.txt"
printf 'x=$(cat x.txt)\necho "---"\necho "score: $(( (x - 3) * (x - 3) ))"\n' >"$L/score.sh"
echo "Lower the score." >"$L/program.md"
git_init "$L"

set +e
out=$("$RATCHET" note "$L" "too early" 2>&1)
set -e
expect_contains "$out" "has no ledger yet" "a note needs a ledger"
"$RATCHET" run "$L" --max-experiments 2 >/dev/null 2>&1 || stopped_by_rule || fail "first run failed"
expect_contains "$(cat "$WORK/prompts/prompt-2.md")" "Lower the score." "a prompt before any note"
out=$("$RATCHET" note "$L" try x below 50) || fail "note failed: $out"
expect_contains "$out" "noted at" "note acknowledged"
expect_eq "$(sql "$L" "SELECT json_extract(detail, '$.text') FROM events WHERE kind='note'")" "try x below 50" "the note in the ledger"
expect_eq "$(sql "$L" "SELECT abs(at - strftime('%s','now')) < 60 FROM events WHERE kind='note'")" 1 "with its time"

expect_contains "$("$RATCHET" prompt "$L" 2>/dev/null)" "): try x below 50" "ratchet prompt shows the note"

out=$("$RATCHET" pause "$L") || fail "pause failed"
expect_contains "$out" "paused at" "pause acknowledged"
expect_contains "$("$RATCHET" status "$L")" "paused:     since" "status shows the pause"
"$RATCHET" run "$L" --max-experiments 4 >"$WORK/run.out" 2>&1 &
run=$!
wait_until 20 grep -q "paused by the user" "$WORK/run.out" || fail "the loop did not wait: $(cat "$WORK/run.out")"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 2 "nothing runs while paused"
expect_contains "$("$RATCHET" status "$L")" "paused:     since" "status shows the pause while running"
"$RATCHET" resume "$L" >/dev/null || fail "resume failed"
wait "$run" || stopped_by_rule || fail "the resumed run failed: $(cat "$WORK/run.out")"
expect_contains "$(cat "$WORK/run.out")" "resumed by the user" "the loop says it goes on"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 4 "the loop went on after resume"
for n in 3 4; do
  expect_contains "$(cat "$WORK/prompts/prompt-$n.md")" "note from the user (" "prompt $n has the note"
  expect_contains "$(cat "$WORK/prompts/prompt-$n.md")" "): try x below 50" "prompt $n has the note's text"
done
case "$("$RATCHET" status "$L")" in *"paused:"*) fail "status still shows a pause" ;; esac
expect_contains "$("$RATCHET" note "$L")" "try x below 50 (after #2)" "the notes, listed"
expect_contains "$("$RATCHET" log "$L")" "note:" "ratchet log shows the note"
finish
