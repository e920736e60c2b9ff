#!/usr/bin/env bash
# Attack: an answer key (tests/attacks/answer_key.inc). It tries to read
# val.bin in every program, from data/ and from the loop directory it was
# told about, and serves logits looked up in it. In the run's and the
# server's views val.bin is not there: the run cannot train on it, and the
# server serves the honest model (same score as the honest server). With
# val.bin made visible on purpose (no views), the causality probe catches
# the key: a probe copy is not in val.bin, so its logits before the changed
# byte differ from the original's.
#   attack_answer_key.sh PREPARE PEAK EVALUATE GRADCHECK HONEST KEY
source "$(dirname "$0")/harness.sh"
view_ok || { echo "attack_answer_key: skipped, bubblewrap cannot make a sandbox here"; exit 77; }
scenario "$@"
export ATTACK_VAL=$loop/data/val.bin

run_train "$loop" "$wc" "$run" || { cat "$run/run.log"; fail "training failed"; }
grep -q '^attack: val.bin not visible$' "$run/run.log" || fail "the run saw val.bin: $(cat "$run/run.log")"
want=$(metric "$(verify "$loop" "$honest" "$run")")
out=$(verify "$loop" "$wc" "$run") || { echo "$out"; fail "verification failed"; }
[ "$(metric "$out")" = "$want" ] || fail "the key scored $(metric "$out"), the honest model $want"

# Without the views the key finds val.bin; then the probe is what stops it.
VIEW=0 run_train "$loop" "$wc" "$work/open" || fail "training without a view failed"
grep -q '^attack: read [0-9]* bytes of val.bin' "$work/open/run.log" || fail "the key never found val.bin"
out=$(VIEW=0 verify "$loop" "$wc" "$run") && fail "the answer key was scored: $out"
grep -q '^FAIL: causality probe: changing byte [0-9]* of a validation window' <<<"$out" ||
  fail "not caught by the probe: $out"
echo "attack_answer_key: ok (in its view the key scores $want like the honest model; with val.bin visible the probe fails it)"
