#!/usr/bin/env bash
# The rubric template on the note it ships: a scripted stand-in writer
# (tests/agents/rubric_writer.py) edits doc.md, a separate stand-in judge
# (tests/agents/rubric_judge.py, another "model") scores each criterion of
# the protected rubric.md through the protected judge.py. The writer is told
# to fix the weakest criterion first; every criterion's score is recorded;
# the loop stops when every criterion is at least 8. A judge that is the
# writer (same model, or same command) is refused before anything runs.
source "$(dirname "$0")/lib.sh"
AGENTS=$RATCHET_HOME/tests/agents

L=$WORK/rubric
"$RATCHET" init --template rubric "$L" >/dev/null || fail "init failed"
for f in ratchet.toml program.md doc.md rubric.md judge.py; do
  [ -f "$L/$f" ] || fail "init: $f missing"
done
rubric_hash=$(sha256sum <"$L/rubric.md")
writer="[propose.agent]
command = [\"python3\", \"$AGENTS/rubric_writer.py\", \"{model}\"]
model = \"writer-model\"
timeout = \"30s\""
set_table "$L" propose.agent "$writer"
set_table "$L" sandbox "$(sandbox_table "$WORK/prompts")"

# A judge on the writer's model is refused, and so is the writer's command.
cp -r "$L" "$WORK/same-model"
set_table "$WORK/same-model" judge "[judge]
command = [\"python3\", \"$AGENTS/rubric_judge.py\", \"{model}\"]
model = \"writer-model\""
set +e
out=$("$RATCHET" run "$WORK/same-model" 2>&1)
code=$?
set -e
expect_eq "$code" 2 "same-model judge: exit code"
expect_contains "$out" "[judge] uses the writer's model (writer-model): a writer must not grade its own work" "same-model judge refused"
[ ! -e "$WORK/same-model/.ratchet/ledger.db" ] || fail "a refused judge left a ledger"
cp -r "$L" "$WORK/same-command"
set_table "$WORK/same-command" judge "[judge]
command = [\"python3\", \"$AGENTS/rubric_writer.py\", \"{model}\"]
model = \"writer-model\""
set +e
out=$("$RATCHET" run "$WORK/same-command" 2>&1)
code=$?
set -e
expect_eq "$code" 2 "same-command judge: exit code"
expect_contains "$out" "[judge] command is the writer's own command" "same-command judge refused"

# The real run: a separate judge on another model.
set_table "$L" judge "[judge]
command = [\"python3\", \"$AGENTS/rubric_judge.py\", \"{model}\"]
model = \"judge-model\"
timeout = \"30s\""
out=$(WRITER_PLAN="4:strongest" AGENT_LOG_DIR=$WORK/prompts "$RATCHET" run "$L" 2>&1) ||
  fail "ratchet run failed: $out"
expect_contains "$out" "stopped: reached stop.target 8: min_score 8 at #7" "stops when every criterion >= 8"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep keep discard keep keep keep" "statuses"
expect_eq "$(sql "$L" "SELECT group_concat(CAST(metric AS INT), ' ') FROM (SELECT metric FROM experiments ORDER BY id)")" \
  "3 4 5 5 6 7 8" "min_score, experiment by experiment"
# Every criterion's score is a metric of every run.
expect_eq "$(sql "$L" "SELECT group_concat(CAST(json_extract(metrics, '$.\"criterion.evidence\"') AS INT), ' ') FROM (SELECT metrics FROM experiments ORDER BY id)")" \
  "3 5 5 5 7 7 9" "criterion.evidence recorded"
best=$(sql "$L" "SELECT printf('%d %d %d %d', json_extract(metrics, '$.\"criterion.clarity\"'), json_extract(metrics, '$.\"criterion.evidence\"'), json_extract(metrics, '$.\"criterion.structure\"'), json_extract(metrics, '$.\"criterion.concision\"')) FROM experiments WHERE id=7")
expect_eq "$best" "9 9 9 8" "every criterion at least 8"
# The writer was told to fix the weakest first: program.md, the scores of
# the best version, and the judge's ranking in the last run log.
p2=$(cat "$WORK/prompts/prompt-2.md")
expect_contains "$p2" "**Fix the weakest criterion first.**" "program.md in the prompt"
expect_contains "$p2" "criterion.evidence = 3" "the best version's scores in the prompt"
expect_contains "$p2" "weakest: evidence (3/10): fix this first" "the judge's ranking in the prompt"
expect_eq "$(sql "$L" "SELECT description FROM experiments WHERE id=2")" "improve evidence" "the writer fixed the weakest"
expect_eq "$(sql "$L" "SELECT description FROM experiments WHERE id=5")" "improve clarity and evidence and structure" "tied weakest fixed together"
expect_eq "$(sha256sum <"$L/rubric.md")" "$rubric_hash" "the rubric is unchanged"
# A criterion can be plotted on its own.
plot=$("$RATCHET" plot "$L" --metric criterion.concision --out "$WORK/concision.svg") || fail "plot --metric failed"
expect_contains "$plot" "7 experiments" "plot of one criterion"
expect_contains "$(cat "$WORK/concision.svg")" "criterion.concision" "the chart names the criterion"
finish
