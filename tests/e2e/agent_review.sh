#!/usr/bin/env bash
# The reviewer ([review]): a separate program gets each candidate's diff and
# description and approves or rejects it. A rejected candidate is recorded as
# `rejected` and never runs; the reviewer's cost counts toward the stop
# rules; a reviewer that answers nothing usable, or edits the candidate,
# rejects it.
source "$(dirname "$0")/lib.sh"

AGENTS=$RATCHET_HOME/tests/agents
make_loop() {  # make_loop DIR [EXTRA-REVIEW-LINES] [EXTRA-SANDBOX-LINES]
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
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
$(sandbox_table)
${3:-}
[propose]
kind = "agent"
[propose.agent]
command = ["sh", "$AGENTS/standin.sh"]
timeout = "10s"
[review]
command = ["sh", "$AGENTS/reviewer.sh"]
timeout = "10s"
${2:-}
TOML
  echo 10 >"$1/x.txt"
  printf 'x=$(head -1 x.txt)\necho "---"\necho "score: $(( (x - 3) * (x - 3) ))"\n' >"$1/score.sh"
  echo "Lower the score." >"$1/program.md"
  git_init "$1"
}

L=$WORK/loop
make_loop "$L"
out=$(AGENT_PLAN="2:good 3:bad 4:good" "$RATCHET" run "$L" --max-experiments 4 2>&1) || stopped_by_rule ||
  fail "ratchet run failed: $out"
status_of() { sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id=$1"; }
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=2")" "keep" "#2 approved and kept"
expect_eq "$(status_of 3)" "rejected: reviewer: the change adds BAD" "#3 rejected"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=4")" "keep" "#4 the loop goes on"
expect_eq "$(sql "$L" "SELECT group_concat(experiment_id, ' ') FROM (SELECT experiment_id FROM runs ORDER BY experiment_id)")" \
  "1 2 4" "the rejected candidate never ran"
# The rejected candidate is kept as a ref, as everything tried is.
expect_contains "$(git -C "$L" show refs/ratchet/tried/3:x.txt)" "BAD" "rejected candidate reachable"
expect_eq "$(head -1 "$L/x.txt")" "8" "tree at the incumbent"
# The reviewer's cost ($0.01) is added to the agent's ($0.10).
expect_eq "$(sql "$L" "SELECT printf('%.2f', json_extract(usage, '$.cost_usd')) FROM experiments WHERE id=3")" \
  "0.11" "reviewer cost counted"
expect_eq "$(sql "$L" "SELECT json_extract(usage, '$.input_tokens') FROM experiments WHERE id=3")" \
  "1900" "reviewer tokens counted"
[ -s "$L/.ratchet/runs/3/review-request.md" ] || fail "no review request kept"
expect_contains "$(cat "$L/.ratchet/runs/3/review.diff")" "+BAD" "diff given to the reviewer"
expect_contains "$(cat "$L/.ratchet/runs/3/review.json")" '"approve": false' "review record"
expect_contains "$(sql "$L" "SELECT mechanisms FROM experiments WHERE id=3")" "review" "mechanism recorded"
expect_eq "$(sql "$L" "SELECT calls FROM mechanism_calls WHERE mechanism='review'")" "3" "reviewer called for each candidate"

# A reviewer that answers nothing usable rejects (fail closed) ...
G=$WORK/garbage
make_loop "$G"
out=$(REVIEWER_MODE=garbage "$RATCHET" run "$G" --max-experiments 2 2>&1) || stopped_by_rule || fail "garbage run failed: $out"
expect_contains "$(sql "$G" "SELECT status || ': ' || reason FROM experiments WHERE id=2")" \
  "rejected: the reviewer gave no answer" "garbage reviewer rejects"
# ... unless on_error = "approve".
A=$WORK/lenient
make_loop "$A" 'on_error = "approve"'
out=$(REVIEWER_MODE=garbage "$RATCHET" run "$A" --max-experiments 2 2>&1) || stopped_by_rule || fail "lenient run failed: $out"
expect_eq "$(sql "$A" "SELECT status FROM experiments WHERE id=2")" "keep" "on_error = approve"
# A reviewer that edits the candidate rejects it, whatever it answers. Without
# a sandbox the guard sees the edit; with one, the write fails.
E=$WORK/editing
make_loop "$E"
out=$(REVIEWER_MODE=edit "$RATCHET" run "$E" --max-experiments 2 2>&1) || stopped_by_rule || fail "editing run failed: $out"
if grep -q '"sandboxed": true' "$E/.ratchet/runs/2/review.json"; then
  expect_eq "$(sql "$E" "SELECT status FROM experiments WHERE id=2")" "keep" "sandboxed reviewer could not edit"
else
  expect_contains "$(sql "$E" "SELECT status || ': ' || reason FROM experiments WHERE id=2")" \
    "rejected: the reviewer changed the candidate's files" "editing reviewer rejected"
fi
mkdir -p "$WORK/nobwrap" && printf '#!/bin/sh\nexit 1\n' >"$WORK/nobwrap/bwrap" && chmod +x "$WORK/nobwrap/bwrap"
E2=$WORK/editing2
make_loop "$E2" "" "required = false"
out=$(PATH="$WORK/nobwrap:$PATH" REVIEWER_MODE=edit "$RATCHET" run "$E2" --max-experiments 2 2>&1) || stopped_by_rule ||
  fail "unsandboxed editing run failed: $out"
expect_contains "$(sql "$E2" "SELECT status || ': ' || reason FROM experiments WHERE id=2")" \
  "rejected: the reviewer changed the candidate's files" "unsandboxed editing reviewer rejected"
expect_eq "$(head -1 "$E2/x.txt")" "10" "tree back at the baseline"

# [review] is read strictly.
printf 'onerror = "approve"\n' >>"$L/ratchet.toml"
git -C "$L" commit -qam "typo"
err=$("$RATCHET" run "$L" --max-experiments 5 2>&1) && fail "a typo in [review] was accepted"
expect_contains "$err" "unknown key 'onerror' in [review]" "strict [review]"
finish
