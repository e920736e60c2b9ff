#!/usr/bin/env bash
# `ratchet audit` on a real loop with a trusted verifier: a clean loop
# passes; a keep that only fits the validation split is shown worse on the
# audit split; a tried commit whose ref was deleted, and a ledger row changed
# behind ratchet's back, are each found (exit 1), and the next `ratchet run`
# puts the row back from the journal.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt"]
protected = ["run.sh", "verify.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "10s"
[verify]
command = "sh verify.sh"
timeout = "10s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 4
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
echo 10 >"$L/x.txt"
# The run "trains": its model is x, saved where the verifier will find it.
cat >"$L/run.sh" <<'SH'
cp x.txt "$RATCHET_RUN_DIR/model"
echo "---"
echo "steps: 1"
SH
# The judge: |x - 7| on val; on audit, x = 7 is 5 worse (it fits val only).
cat >"$L/verify.sh" <<'SH'
x=$(cat "$RATCHET_RUN_DIR/model")
d=$((x > 7 ? x - 7 : 7 - x))
if [ "$RATCHET_VERIFY_SPLIT" = audit ] && [ "$x" = 7 ]; then d=$((d + 5)); fi
echo "---"
echo "score: $d"
SH
cat >"$L/propose.sh" <<'SH'
case "$RATCHET_EXPERIMENT" in
  2) echo 8 > x.txt ;;
  3) echo 9 > x.txt ;;
  *) echo 7 > x.txt ;;
esac
echo "DESCRIPTION: x to $(cat x.txt)"
SH
git_init "$L"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "run failed: $out"
expect_eq "$(sql "$L" "SELECT group_concat(status || ' ' || metric, ', ') FROM experiments")" \
  "keep 3.0, keep 1.0, discard 2.0, keep 0.0" "statuses and scores on val"

out=$("$RATCHET" audit "$L" 2>&1)
code=$?
expect_eq "$code" 0 "a clean loop: exit code"
expect_contains "$out" "audit: ok" "a clean loop passes"
expect_contains "$out" "MACs checked" "the journal's MACs are checked"
expect_contains "$out" "re-scored on the audit split" "keeps re-scored"
expect_contains "$out" "audit 5  worse than its parent on audit" "#4 fits val only"
json=$("$RATCHET" audit "$L" --json)
expect_eq "$(printf '%s' "$json" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join(str(k["audit"]) for k in r["keeps"]))')" \
  "3.0 1.0 5.0" "audit scores of the keeps, as JSON"

# A tried commit whose ref is gone.
tried=$(git -C "$L" rev-parse refs/ratchet/tried/3)
git -C "$L" update-ref -d refs/ratchet/tried/3
code=0
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || code=$?
expect_eq "$code" 1 "a lost tried commit: exit code"
expect_contains "$out" "missing: #3" "the lost tried commit is named"
git -C "$L" update-ref refs/ratchet/tried/3 "$tried"

# A ledger row changed behind ratchet's back: the discard made a keep.
sqlite3 "$L/.ratchet/ledger.db" "UPDATE experiments SET status = 'keep', metric = 0.001 WHERE id = 3"
code=0
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || code=$?
expect_eq "$code" 1 "a forged row: exit code"
expect_contains "$out" "row:" "the forged row is reported"
out=$("$RATCHET" run "$L" --max-experiments 5 2>&1) || stopped_by_rule || fail "resume failed: $out"
expect_eq "$(sql "$L" "SELECT status || ' ' || metric FROM experiments WHERE id = 3")" "discard 2.0" \
  "the next run put the row back from the journal"
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit after the repair: $out"

# A ledger damaged under SQLite (its first page scribbled over) is a problem
# found, not bad input.
cp "$L/.ratchet/ledger.db" "$WORK/ledger.db.kept"
python3 - "$L/.ratchet/ledger.db" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(100)
    f.write(b"\xa5" * (4096 - 100))
PY
rm -f "$L/.ratchet/ledger.db-wal" "$L/.ratchet/ledger.db-shm"
code=0
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || code=$?
expect_eq "$code" 1 "a damaged ledger: exit code"
expect_contains "$out" "audit: the ledger is damaged" "the damage is named"

# Bad input.
code=0
"$RATCHET" audit "$WORK/nowhere" >/dev/null 2>&1 || code=$?
expect_eq "$code" 2 "no such loop: exit code"
rm -f "$L/.ratchet/ledger.db"
code=0
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || code=$?
expect_eq "$code" 2 "a loop with no ledger: exit code"
expect_contains "$out" "has no ledger yet" "the missing ledger is named"
finish
