#!/usr/bin/env bash
# A trained model that looks one byte ahead (the causal mask shifted by one
# inside each attention block, forward and backward alike): it trains, and
# the evaluator's probes, hidden among the validation windows, fail it.
#   attack_lookahead.sh PREPARE PEAK EVALUATE GRADCHECK HONEST LOOKAHEAD
source "$(dirname "$0")/harness.sh"
scenario "$@"
run_train "$loop" "$wc" "$run" || { cat "$run/run.log"; fail "training failed"; }
out=$(verify "$loop" "$wc" "$run") && fail "a model that looks ahead was scored: $out"
grep -q '^FAIL: causality probe: .* the model looks ahead at later bytes' <<<"$out" ||
  fail "not caught: $out"
[ -z "$(metric "$out")" ] || fail "a score despite the failure"
echo "attack_lookahead: ok"
