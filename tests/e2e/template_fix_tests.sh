#!/usr/bin/env bash
# The fix-tests template on the project it ships (textkit, a C library with
# a CTest suite, 5 of 6 tests failing), driven by a scripted stand-in agent
# (tests/agents/fixer.py): it fixes bugs one at a time, tries to edit a
# protected test, breaks the type check once and the build once. The loop
# must end with every test passing, counted from CTest's own JUnit report,
# without a test having changed; the build and type-check gates must stop
# the bad changes before they run.
source "$(dirname "$0")/lib.sh"
AGENTS=$RATCHET_HOME/tests/agents
for tool in cmake ctest cc python3; do
  command -v "$tool" >/dev/null || { echo "template_fix_tests: $tool missing; skipped"; exit 0; }
done

L=$WORK/fix
"$RATCHET" init --template fix-tests "$L" >/dev/null || fail "init failed"
for f in ratchet.toml program.md .gitignore CMakeLists.txt src/textkit.c src/textkit.h \
  tests/test_textkit.c check/build.sh check/typecheck.sh check/run_tests.sh \
  check/count_failures.py check/expected_tests.txt; do
  [ -f "$L/$f" ] || fail "init: $f missing"
done
[ ! -e "$L/README.md" ] && [ ! -e "$L/MANIFEST" ] || fail "init copied README.md or MANIFEST"
tests_hash=$(sha256sum <"$L/tests/test_textkit.c")

set_table "$L" propose.agent "[propose.agent]
command = [\"python3\", \"$AGENTS/fixer.py\"]
timeout = \"30s\""
set_table "$L" sandbox "$(sandbox_table "$WORK/prompts")"
start=$(git -C "$L" rev-parse HEAD)
out=$(FIXER_PLAN="2:count_words 3:cheat 4:typeerror 5:syntax 6:reverse 7:palindrome 8:parse_long 9:copy" \
  AGENT_LOG_DIR=$WORK/prompts "$RATCHET" run "$L" 2>&1) || fail "ratchet run failed: $out"

expect_contains "$out" "stopped: reached stop.target 0: failing_tests 0 at #9" "stops at 0 failing tests"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep out_of_scope gate_failed gate_failed keep keep keep keep" "statuses"
expect_eq "$(sql "$L" "SELECT group_concat(CAST(metric AS INT), ' ') FROM (SELECT metric FROM experiments WHERE metric IS NOT NULL ORDER BY id)")" \
  "5 4 3 2 1 0" "failing tests, experiment by experiment"
expect_contains "$(sql "$L" "SELECT reason FROM experiments WHERE id=3")" "tests/test_textkit.c" "editing a test is out of scope"
expect_contains "$(sql "$L" "SELECT reason FROM experiments WHERE id=4")" "gate typecheck failed" "the type check gate"
expect_contains "$(sql "$L" "SELECT reason FROM experiments WHERE id=5")" "gate build failed" "the build gate"
expect_eq "$(sql "$L" "SELECT json_extract(metrics, '$.tests') || ' ' || json_extract(metrics, '$.passed') FROM experiments WHERE id=9")" \
  "6.0 6.0" "the report's counts"

# No test changed, on the branch or in the tree.
expect_eq "$(git -C "$L" diff --stat "$start" HEAD -- tests/ check/ CMakeLists.txt)" "" "tests untouched on the branch"
expect_eq "$(sha256sum <"$L/tests/test_textkit.c")" "$tests_hash" "test file unchanged"
# The proposer was shown which tests fail, from the counter's output.
expect_contains "$(cat "$WORK/prompts/prompt-3.md")" "FAIL reverse" "the failing tests reach the prompt"

# Checked again from outside, on the final tree: build, type check, tests.
(cd "$L" && sh check/build.sh >/dev/null 2>&1) || fail "the final tree does not build"
(cd "$L" && sh check/typecheck.sh) || fail "the final tree fails the type check"
(cd "$L/build" && ctest --output-junit "$WORK/final.xml" >/dev/null 2>&1) || fail "ctest fails on the final tree"
expect_contains "$(cat "$WORK/final.xml")" 'failures="0"' "CTest's own report: no failures"
finish
