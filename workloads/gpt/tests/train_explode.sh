#!/usr/bin/env bash
# Learning rates that blow the loss up: the run stops at once with FAIL and
# a non-zero exit, and saves no checkpoint.
#   train_explode.sh PREPARE PEAK EVALUATE GRADCHECK HONEST EXPLODE
source "$(dirname "$0")/harness.sh"
scenario "$@"
export RATCHET_BUDGET_SECONDS=2 RATCHET_SEED=3 GPT_CLOCK=cpu
run_train "$loop" "$wc" "$run" && fail "the exploding run exited 0"
grep -q '^FAIL: training loss is .* at step [0-9]' "$run/run.log" || fail "no FAIL line: $(cat "$run/run.log")"
[ ! -e "$run/model.bin" ] || fail "the exploding run saved a checkpoint"
echo "train_explode: ok"
