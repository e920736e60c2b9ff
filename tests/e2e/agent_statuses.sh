#!/usr/bin/env bash
# The agent proposer with a scripted stand-in agent (tests/agents/standin.sh)
# that misbehaves in a different way each experiment: a good in-scope edit,
# a protected file, nothing, a hang past the timeout, a non-zero exit, an
# attempt to write the ledger, a file outside the rules. Each is recorded
# with the right status, the loop goes on, and nothing outside the rules
# changes the tree or ratchet's state.
#
# The loop runs without the sandbox ([sandbox] required = false, and a
# stand-in `bwrap` that fails is first in PATH), so ratchet's own guard is what catches the ledger write; where
# bubblewrap works, a second loop checks that the sandbox refuses it.
source "$(dirname "$0")/lib.sh"

AGENTS=$RATCHET_HOME/tests/agents
export AGENT_LOG_DIR=$WORK/prompts
mkdir -p "$WORK/nobwrap"
printf '#!/bin/sh\nexit 1\n' >"$WORK/nobwrap/bwrap"
chmod +x "$WORK/nobwrap/bwrap"

make_loop() {  # make_loop DIR [SANDBOX-LINES]: x.txt scored by (x - 3)^2, the stand-in as agent
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["score.sh", "ratchet.toml", "program.md"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
grace = "1s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 9
$(sandbox_table "$AGENT_LOG_DIR")
${2:-}
[propose]
kind = "agent"
[propose.agent]
command = ["sh", "$AGENTS/standin.sh"]
timeout = "2s"
model = "standin"
TOML
  echo 10 >"$1/x.txt"
  cat >"$1/score.sh" <<'SH'
x=$(cat x.txt)
echo "---"
echo "score: $(( (x - 3) * (x - 3) ))"
SH
  printf '# Toy\nLower score by editing x.txt.\n' >"$1/program.md"
  git_init "$1"
}

L=$WORK/loop
make_loop "$L" "required = false"
export AGENT_PLAN="2:good 3:protected 4:nothing 5:hang 6:fail 7:ledger 8:outside 9:good"
started=$SECONDS
out=$(PATH="$WORK/nobwrap:$PATH" "$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
took=$((SECONDS - started))

status_of() { sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=$1"; }
expect_eq "$(status_of 1)" "keep: baseline" "#1 baseline"
expect_eq "$(sql "$L" "SELECT status || ' ' || description FROM experiments WHERE id=2")" \
  "keep lower x from 10 to 9" "#2 good edit, description from the agent's report"
expect_eq "$(sql "$L" "SELECT hypothesis FROM experiments WHERE id=2")" "x nearer 3 scores better" "#2 hypothesis"
expect_eq "$(status_of 3)" "out_of_scope: changed protected file score.sh" "#3 protected file"
expect_eq "$(status_of 4)" "no_change: the agent changed nothing; it said: no change: x looks optimal" "#4 nothing"
expect_contains "$(status_of 5)" "propose_failed: the agent timed out after 2.0s" "#5 hangs"
expect_eq "$(status_of 6)" "propose_failed: the agent exit 3: agent: API error 529 overloaded (log: .ratchet/runs/6/agent.log)" "#6 exits non-zero, with what it said last"
expect_eq "$(status_of 7)" "propose_failed: the agent changed .git/refs/heads/forged, .ratchet/ledger.db-wal, .ratchet/notes.md (put back); .git and .ratchet are ratchet's, the agent must not write them (log: .ratchet/runs/7/agent.log)" "#7 writes the ledger"
expect_eq "$(status_of 8)" "out_of_scope: created other.txt, which is not in edit.files" "#8 outside the rules"
expect_eq "$(sql "$L" "SELECT status || ' ' || description FROM experiments WHERE id=9")" \
  "keep lower x from 9 to 8" "#9 the loop goes on from the incumbent"

# Usage from the stand-in's report: input counts cached tokens too.
expect_eq "$(sql "$L" "SELECT usage FROM experiments WHERE id=2")" \
  '{"cost_usd":0.1,"input_tokens":1500,"output_tokens":50}' "#2 usage"
expect_eq "$(sql "$L" "SELECT printf('%.1f', sum(json_extract(usage, '$.cost_usd'))) FROM experiments")" \
  "0.6" "usage of every report (#2 #3 #4 #7 #8 #9)"
# The falsified ledger write was undone; the ledger is whole.
expect_eq "$(sql "$L" "SELECT description || ' ' || metric FROM experiments WHERE id=1")" "baseline 49.0" "#1 not forged"
expect_eq "$(sql "$L" "PRAGMA integrity_check")" "ok" "ledger integrity"
expect_eq "$(git -C "$L" for-each-ref --format='%(refname)' refs/heads/forged)" "" "no forged ref"
expect_eq "$(grep -c 'everything was kept' "$L/.ratchet/notes.md")" "0" "notes not forged"
expect_contains "$(cat "$L/.ratchet/runs/7/agent.log")" "ledger write: done" "#7 really wrote (no sandbox)"
expect_contains "$(cat "$L/.ratchet/runs/7/agent.json")" '"sandboxed": false' "#7 ran without the sandbox"
# Said in the ledger row, `ratchet show` and `ratchet status`.
expect_contains "$("$RATCHET" show "$L" 7 --no-diff)" "warning:     ran without the sandbox" \
  "show names the missing sandbox"
expect_contains "$("$RATCHET" status "$L")" "warnings:   " "status counts the warnings"
[ ! -e "$L/.ratchet/guard" ] || fail "the guard's aside links were left behind"
# Only candidates that followed the rules ran: the baseline, #2 and #9.
expect_eq "$(sql "$L" "SELECT group_concat(experiment_id, ' ') FROM (SELECT experiment_id FROM runs ORDER BY experiment_id)")" \
  "1 2 9" "runs"
# One note line per experiment; a prompt and an agent log per proposal.
expect_eq "$(wc -l <"$L/.ratchet/notes.md")" "9" "notes lines"
for n in 2 3 4 5 6 7 8 9; do
  [ -s "$L/.ratchet/runs/$n/prompt.md" ] || fail "#$n has no prompt.md"
  [ -e "$L/.ratchet/runs/$n/agent.log" ] || fail "#$n has no agent.log"
  cmp -s "$L/.ratchet/runs/$n/prompt.md" "$AGENT_LOG_DIR/prompt-$n.md" || fail "#$n: the agent got another prompt than prompt.md"
done
expect_contains "$(cat "$L/.ratchet/runs/6/agent.log")" "API error 529" "#6 agent.log keeps the output"
# The tree is at the incumbent, clean, and the branch holds the kept commits only.
expect_eq "$(cat "$L/x.txt")" "8" "x at the incumbent"
expect_eq "$(git -C "$L" status --porcelain)" "" "clean tree"
expect_eq "$(git -C "$L" rev-list --count "$(sql "$L" "SELECT value FROM meta WHERE key='start_commit'")..ratchet/main")" "2" "two kept commits"
expect_eq "$(git -C "$L" show ratchet/main:score.sh | tail -1)" 'echo "score: $(( (x - 3) * (x - 3) ))"' "score.sh untouched"
# The hung agent was killed with its whole process group.
hung=$(cat "$AGENT_LOG_DIR/hang-5.pid")
if pid_alive "$hung"; then fail "the hung agent (pid $hung) is still running"; fi
[ "$took" -lt 60 ] || fail "the loop took ${took}s"

# With a working sandbox, .git and .ratchet are read-only to the agent: its
# ledger write is refused and its (legal) edit goes on to run.
if bwrap --dev-bind / / --ro-bind /etc /etc true 2>/dev/null; then
  S=$WORK/sandboxed
  make_loop "$S"
  export AGENT_PLAN="2:ledger"
  out=$("$RATCHET" run "$S" --max-experiments 2 2>&1) || stopped_by_rule || fail "sandboxed run failed: $out"
  expect_contains "$(cat "$S/.ratchet/runs/2/agent.json")" '"sandboxed": true' "sandboxed #2"
  expect_contains "$(cat "$S/.ratchet/runs/2/agent.log")" "ledger write: refused" "sandbox refuses the ledger"
  expect_contains "$(cat "$S/.ratchet/runs/2/agent.log")" "ref write: refused" "sandbox refuses .git"
  expect_eq "$(sql "$S" "SELECT status FROM experiments WHERE id=2")" "keep" "sandboxed #2 goes on"
  expect_eq "$(sql "$S" "SELECT description FROM experiments WHERE id=1")" "baseline" "sandboxed #1 not forged"
  expect_eq "$(grep -c 'everything was kept' "$S/.ratchet/notes.md")" "0" "sandboxed: notes not forged"
else
  echo "agent_statuses: bubblewrap does not work here; the sandboxed case was skipped"
fi
finish
