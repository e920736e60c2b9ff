#!/usr/bin/env bash
# Attack: a model server with a memory (tests/attacks/mirror.inc) looks
# ahead and keeps its answers consistent across windows that share a
# prefix, so the probe copies answered by the same process agree with their
# originals. With a second, independent instance answering the probes
# (RATCHET_PROBE_WRITE_FD / RATCHET_PROBE_READ_FD), it cannot, and fails.
# (What one instance scores it is printed, not asserted: see the README.)
#   attack_mirror.sh PREPARE PEAK EVALUATE GRADCHECK HONEST MIRROR
source "$(dirname "$0")/harness.sh"
scenario "$@"

run_train "$loop" "$honest" "$run" || { cat "$run/run.log"; fail "training failed"; }
want=$(metric "$(verify "$loop" "$honest" "$run" val -2)")
[ -n "$want" ] || fail "the honest model failed with two instances"
one=$(verify "$loop" "$wc" "$run" | grep -E '^(FAIL|val_bpb)' || true)
out=$(verify "$loop" "$wc" "$run" val -2) && fail "the mirror was scored with two instances: $out"
grep -q '^FAIL: causality probe: changing byte [0-9]* of a validation window' <<<"$out" ||
  fail "not caught: $out"
echo "attack_mirror: ok (honest $want; mirror with one instance: $one; with two: caught)"
