#!/usr/bin/env bash
# The trainer end to end on a small corpus: a short budget, progress lines,
# the summary, the saved model, the same val_bpb when that model is scored
# again, an audit score, refusal of tampered data, and FAIL on a loss that
# explodes.
#   train_e2e.sh PREPARE TRAIN TRAIN_EXPLODE
set -euo pipefail
prepare=$1 train=$2 explode=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail() { echo "train_e2e: $*" >&2; exit 1; }

for i in $(seq 1 3000); do
  echo "Chapter $((i % 40)). It is a truth universally acknowledged, that a single man $((i * 7919 % 1000))."
done >corpus.txt
"$prepare" --text corpus.txt --out data >/dev/null
# CPU-time budget: the same few steps however busy the machine is.
export GPT_DATA_DIR=$dir/data RATCHET_RUN_DIR=$dir RATCHET_BUDGET_SECONDS=2 RATCHET_SEED=3 GPT_CLOCK=cpu

"$train" >train.log 2>&1 || { cat train.log; fail "training failed"; }
grep -q '^progress: elapsed=[0-9.]* step=[0-9]* loss=' train.log || fail "no progress line"
for key in val_bpb training_seconds total_seconds peak_mem_mb mfu_percent total_tokens_M \
    num_steps num_params_M depth; do
  grep -q "^$key: *[0-9.]*\$" train.log || fail "summary lacks $key"
done
[ "$(grep -n '^---$' train.log | cut -d: -f1)" -lt "$(grep -n '^val_bpb:' train.log | cut -d: -f1)" ] ||
  fail "val_bpb before ---"
[ -f model.bin ] || fail "model.bin not saved in RATCHET_RUN_DIR"
bpb=$(awk '/^val_bpb:/ {print $2}' train.log)
awk -v b="$bpb" 'BEGIN { exit !(b > 0 && b < 8) }' || fail "val_bpb $bpb is not below 8 (uniform)"

# The evaluator gives the same score for the same checkpoint, every time.
for run in 1 2; do
  again=$("$train" --eval model.bin | awk '/^val_bpb:/ {print $2}')
  [ "$again" = "$bpb" ] || fail "re-scoring gave $again, training run said $bpb"
done
"$train" --eval model.bin --split audit | grep -q '^audit_bpb: *[0-9.]*$' || fail "no audit_bpb"

# A changed byte in the validation data is refused.
printf 'x' | dd of=data/val.bin bs=1 seek=100 conv=notrunc status=none
if "$train" --eval model.bin >tampered.log 2>&1; then fail "tampered val.bin accepted"; fi
grep -q '^FAIL: .*val.bin does not match its SHA-256' tampered.log || { cat tampered.log; fail "no clear refusal"; }
grep -q '^val_bpb' tampered.log && fail "scored tampered data"

# An exploding loss stops at once with FAIL and a non-zero exit.
"$prepare" --text corpus.txt --out data >/dev/null
if "$explode" >explode.log 2>&1; then fail "exploding run exited 0"; fi
grep -q '^FAIL: training loss is .* at step [0-9]' explode.log || { cat explode.log; fail "no FAIL line"; }
grep -q '^val_bpb' explode.log && fail "exploding run was scored"
echo "train_e2e: ok (val_bpb $bpb)"
