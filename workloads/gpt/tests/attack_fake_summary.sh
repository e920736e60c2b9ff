#!/usr/bin/env bash
# Attack: train.cpp prints a fake summary from a static initialiser (it can
# no longer define main). In the run the line is a claim the harness, like
# ratchet, never reads as the score: the score is the evaluator's, and it
# is the model's real one. When the initialiser also prints in build/serve,
# the bytes land on the protocol stream and both judges fail the candidate.
#   attack_fake_summary.sh PREPARE PEAK EVALUATE GRADCHECK HONEST FAKE
source "$(dirname "$0")/harness.sh"
scenario "$@"

run_train "$loop" "$wc" "$run" || { cat "$run/run.log"; fail "training failed"; }
grep -q '^val_bpb: *0.000001$' "$run/run.log" || fail "the planted initialiser did not print"
out=$(verify "$loop" "$wc" "$run") || { echo "$out"; fail "verification failed"; }
bpb=$(metric "$out")
awk -v b="$bpb" 'BEGIN { exit !(b > 1 && b < 8) }' || fail "the score is '$bpb', not the model's"

export ATTACK_IN_SERVE=1
out=$(verify "$loop" "$wc" "$run") && fail "a server that prints before main was scored: $out"
grep -q "^FAIL: the model server wrote something that is not an answer to the info request" \
  <<<"$out" || fail "verify: $out"
[ -z "$(metric "$out")" ] || fail "a score despite the failure"
out=$(gate "$loop" "$wc") && fail "gradcheck passed a server that prints before main"
grep -q "^FAIL: the model server wrote something that is not an answer to the make request" \
  <<<"$out" || fail "gradcheck: $out"
echo "attack_fake_summary: ok (the run claimed 0.000001, the evaluator scored $bpb)"
