#!/usr/bin/env bash
# The agent's stop rules on the real binary: the circuit breaker stops the
# loop after K failed proposals in a row and says why; stop.cost_usd and
# stop.tokens stop it once the agent's reported usage reaches them, and a
# made-up report can neither pay the spend back nor score an experiment.
source "$(dirname "$0")/lib.sh"

AGENTS=$RATCHET_HOME/tests/agents

make_loop() {  # make_loop DIR STOP-TABLE-LINES
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
[stop]
max_experiments = 30
$2
$(sandbox_table)
[propose]
kind = "agent"
[propose.agent]
command = ["sh", "$AGENTS/standin.sh"]
timeout = "10s"
TOML
  echo 100 >"$1/x.txt"
  printf 'x=$(cat x.txt)\necho "---"\necho "score: $(( (x - 3) * (x - 3) ))"\n' >"$1/score.sh"
  echo "Lower the score." >"$1/program.md"
  git_init "$1"
}

# Circuit breaker: after one keep, the agent fails in four different ways.
B=$WORK/breaker
make_loop "$B" "consecutive_failures = 4"
out=$(AGENT_PLAN="2:good 3:fail 4:nothing 5:protected 6:fail" AGENT_DEFAULT=good \
  "$RATCHET" run "$B" 2>&1) || stopped_by_rule || fail "breaker run failed: $out"
expect_contains "$out" "stopped: circuit breaker: 4 failed experiments in a row (last: #6 propose_failed: the agent exit 3" "breaker reason"
expect_eq "$(sql "$B" "SELECT count(*) FROM experiments")" "6" "breaker fired at the 4th failure"
expect_eq "$(sql "$B" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep propose_failed no_change out_of_scope propose_failed" "breaker statuses"
expect_contains "$(sql "$B" "SELECT stop_reason FROM sessions")" "circuit breaker" "breaker in the ledger"
# A keep in between resets the count: 3 failures, a keep, 3 failures go on.
B2=$WORK/breaker2
make_loop "$B2" "consecutive_failures = 4"
out=$(AGENT_PLAN="2:fail 3:fail 4:fail 6:fail 7:fail 8:fail" AGENT_DEFAULT=good \
  "$RATCHET" run "$B2" --max-experiments 9 2>&1) || stopped_by_rule || fail "breaker2 run failed: $out"
expect_contains "$out" "stopped: reached stop.max_experiments (9)" "a keep resets the breaker"

# Cost: each proposal reports $0.10; the stop is $0.25, so it fires after
# the third proposal (0.30 >= 0.25), before a fourth is paid for.
C=$WORK/cost
make_loop "$C" "cost_usd = 0.25"
out=$(AGENT_COST=0.1 "$RATCHET" run "$C" 2>&1) || stopped_by_rule || fail "cost run failed: $out"
expect_contains "$out" 'stopped: spent $0.30 of stop.cost_usd $0.25' "cost reason"
expect_eq "$(sql "$C" "SELECT count(*) FROM experiments")" "4" "cost fired after 3 proposals"
# It holds across sessions: the spend is in the ledger.
out=$(AGENT_COST=0.1 "$RATCHET" run "$C" 2>&1) || stopped_by_rule || fail "cost rerun failed: $out"
expect_contains "$out" 'stopped: spent $0.30 of stop.cost_usd $0.25' "cost on resume"
expect_eq "$(sql "$C" "SELECT count(*) FROM experiments")" "4" "no experiment after resume"

# A made-up report cannot pay the spend back or score the experiment: #3
# claims "score: 0" and reports -$5 and negative tokens. Its usage counts as
# zero, its metric is what score.sh printed, and the stop still fires once
# the real reports reach $0.25 (#2, #4, #5).
F=$WORK/fake
make_loop "$F" "cost_usd = 0.25"
out=$(AGENT_PLAN="3:fakeusage" AGENT_COST=0.1 "$RATCHET" run "$F" 2>&1) || stopped_by_rule || fail "fake-usage run failed: $out"
expect_contains "$out" 'stopped: spent $0.30 of stop.cost_usd $0.25' "fake usage: cost reason"
expect_eq "$(sql "$F" "SELECT count(*) FROM experiments")" "5" "fake usage: the stop fired after 3 paid proposals"
expect_eq "$(sql "$F" "SELECT status || ' ' || metric || ' ' || description FROM experiments WHERE id=3")" \
  "keep 9025.0 lower x from 99 to 98" "fake usage: #3 scored by its run, not by its claim"
expect_eq "$(sql "$F" "SELECT json_extract(usage, '$.cost_usd') || ' ' || json_extract(usage, '$.input_tokens') || ' ' || json_extract(usage, '$.output_tokens') FROM experiments WHERE id=3")" \
  "0.0 0 0" "fake usage: negative numbers count as zero"

# Tokens: each report is 1500 input + 50 output tokens.
T=$WORK/tokens
make_loop "$T" "tokens = 3000"
out=$("$RATCHET" run "$T" 2>&1) || stopped_by_rule || fail "tokens run failed: $out"
expect_contains "$out" "stopped: used 3100 tokens of stop.tokens 3000" "tokens reason"
expect_eq "$(sql "$T" "SELECT count(*) FROM experiments")" "3" "tokens fired after 2 proposals"
finish
