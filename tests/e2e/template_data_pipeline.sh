#!/usr/bin/env bash
# The data-pipeline template on the pipeline it ships (messy orders CSV ->
# JSON lines, checked against schema.json by a protected checker), driven by
# a scripted stand-in agent (tests/agents/pipeline_fixer.py) that cleans one
# field at a time, once tries to drop the bad rows, and once edits the
# checker. The loop must end with no schema violations.
source "$(dirname "$0")/lib.sh"
AGENTS=$RATCHET_HOME/tests/agents

L=$WORK/pipeline
"$RATCHET" init --template data-pipeline "$L" >/dev/null || fail "init failed"
for f in ratchet.toml program.md .gitignore transform.py schema.json data/orders.csv \
  check/run.sh check/check_schema.py; do
  [ -f "$L/$f" ] || fail "init: $f missing"
done
set_table "$L" propose.agent "[propose.agent]
command = [\"python3\", \"$AGENTS/pipeline_fixer.py\"]
timeout = \"30s\""
set_table "$L" sandbox "$(sandbox_table)"
out=$(PIPELINE_PLAN="2:id 3:amount 4:drop 5:checker 6:email 7:currency 8:date 9:country" \
  "$RATCHET" run "$L" 2>&1) || fail "ratchet run failed: $out"

expect_contains "$out" "stopped: reached stop.target 0: violations 0 at #9" "stops with no violations"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep keep discard out_of_scope keep keep keep keep" "statuses"
expect_eq "$(sql "$L" "SELECT group_concat(CAST(metric AS INT), ' ') FROM (SELECT metric FROM experiments WHERE metric IS NOT NULL ORDER BY id)")" \
  "57 45 21 52 17 12 7 0" "violations, experiment by experiment"
# Dropping rows costs more than it saves: a missing row is an empty record.
expect_contains "$(sql "$L" "SELECT reason FROM experiments WHERE id=4")" "52" "dropping rows is discarded"
expect_contains "$(sql "$L" "SELECT reason FROM experiments WHERE id=5")" "check/check_schema.py" "the checker is protected"
expect_eq "$(sql "$L" "SELECT json_extract(metrics, '$.records') FROM experiments WHERE id=9")" "12.0" "every row comes out"

# Checked again from outside on the final tree.
final=$(cd "$L" && sh check/run.sh)
expect_contains "$final" "violations: 0" "the final pipeline passes the schema"
expect_eq "$(wc -l <"$L/out/orders.jsonl")" "12" "twelve records"
expect_eq "$(head -1 "$L/out/orders.jsonl")" \
  '{"id": 1, "customer": "Ada Lovelace", "email": "ada@example.com", "amount_cents": 1250, "currency": "EUR", "date": "2026-11-02", "country": "GB"}' \
  "the first record"
finish
