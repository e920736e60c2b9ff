#!/usr/bin/env bash
# The gpt template's steps end to end, built with its Makefile as ratchet
# will: `make trusted data` once in a loop directory; for the experiment, a
# clean copy of the sources and `make candidate` in it; build/train in the
# run's view; trusted/gradcheck and trusted/evaluate talking to build/serve
# in the server's view. Checks what the run prints (progress, claims, no
# score), the saved checkpoint, the score and the same score when the
# checkpoint is scored again, the audit split, a tampered val.bin, a server
# given garbage, and prints the time of each step.
#   loop_e2e.sh GPT_SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/harness.sh"
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
loop=$work/loop wc=$work/wc run=$work/run
make_args=(-s -j2)
command -v ccache >/dev/null && make_args+=(CXX="ccache g++")
secs() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.1f", b - a }'; }

# What `ratchet init` copies (templates/gpt/MANIFEST), then [prepare].
mkdir -p "$loop"
cp -r "$src/train.cpp" "$src/Makefile" "$src/prepare" "$loop/"
small_corpus >"$work/corpus.txt"
t=$(secs)
make -C "$loop" "${make_args[@]}" trusted >/dev/null
make -C "$loop" -s data TEXT="$work/corpus.txt" >/dev/null
echo "trusted build and data: $(since "$t") s"
for p in evaluate gradcheck prepare peak; do [ -x "$loop/trusted/$p" ] || fail "no trusted/$p"; done
[ ! -e "$loop/build" ] || fail "make trusted wrote build/"
for f in train.bin val.bin audit.bin manifest.txt peak_gflops.txt; do
  [ -f "$loop/data/$f" ] || fail "no data/$f"
done

# The experiment: a clean copy of the commit, the candidate build in it.
mkdir -p "$wc"
cp -r "$src/train.cpp" "$src/Makefile" "$src/prepare" "$wc/"
t=$(secs)
make -C "$wc" "${make_args[@]}" candidate >/dev/null
echo "candidate build: $(since "$t") s"
[ -x "$wc/build/train" ] && [ -x "$wc/build/serve" ] || fail "make candidate made no build/train, build/serve"
[ ! -e "$wc/trusted" ] || fail "make candidate wrote trusted/"

t=$(secs)
out=$(gate "$loop" "$wc") || { echo "$out"; fail "gradcheck failed on the shipped model"; }
echo "gradcheck: $(since "$t") s"
grep -q '^gradcheck: all .* match finite differences' <<<"$out" || fail "gradcheck said: $out"

# CPU-time budget: the same few steps however busy the machine is.
export RATCHET_BUDGET_SECONDS=2 RATCHET_SEED=3 GPT_CLOCK=cpu
t=$(secs)
run_train "$loop" "$wc" "$run" || { cat "$run/run.log"; fail "training failed"; }
echo "run: $(since "$t") s"
log=$(cat "$run/run.log")
grep -q '^progress: elapsed=[0-9.]* step=[0-9]* loss=' <<<"$log" || fail "no progress line"
for key in training_seconds total_seconds peak_mem_mb mfu_percent total_tokens_M num_steps \
    num_params_M depth; do
  grep -q "^$key: *[0-9.]*\$" <<<"$log" || fail "the run's claims lack $key"
done
grep -q 'val_bpb' <<<"$log" && fail "the run printed a score: only the evaluator may"
[ -f "$run/model.bin" ] || fail "no model.bin in RATCHET_RUN_DIR"

t=$(secs)
out=$(verify "$loop" "$wc" "$run") || { echo "$out"; fail "verification failed"; }
echo "verify: $(since "$t") s"
bpb=$(metric "$out")
awk -v b="$bpb" 'BEGIN { exit !(b > 0 && b < 8) }' || fail "val_bpb '$bpb' is not below 8 (uniform)"
for key in eval_seconds eval_windows eval_probes num_params_M depth; do
  grep -q "^$key: *[0-9.]*\$" <<<"$out" || fail "the summary lacks $key"
done
[ "$(grep -c '^val_bpb' <<<"$out")" = 1 ] || fail "not exactly one val_bpb line"

# The same checkpoint scores the same, though the order and the probes change.
for again in 1 2; do
  b=$(metric "$(verify "$loop" "$wc" "$run")")
  [ "$b" = "$bpb" ] || fail "scoring again gave $b, first $bpb"
done
out=$(verify "$loop" "$wc" "$run" audit) || { echo "$out"; fail "audit failed"; }
audit=$(awk '/^audit_bpb:/ {print $2}' <<<"$out")
[ -n "$audit" ] && [ "$audit" = "$(metric "$out")" ] && [ "$audit" != "$bpb" ] ||
  fail "audit: '$out'"
# Two independent server instances (the probes on the second) agree too.
[ "$(metric "$(verify "$loop" "$wc" "$run" val -2)")" = "$bpb" ] || fail "two instances disagree"

# A changed byte of val.bin is refused.
cp "$loop/data/val.bin" "$work/val.bin"
printf 'x' | dd of="$loop/data/val.bin" bs=1 seek=100 conv=notrunc status=none
out=$(verify "$loop" "$wc" "$run") && fail "tampered val.bin accepted"
grep -q '^FAIL: .*val.bin does not match its SHA-256' <<<"$out" || fail "no clear refusal: $out"
grep -q '^val_bpb' <<<"$out" && fail "scored tampered data"
cp "$work/val.bin" "$loop/data/val.bin"

# The server refuses garbage with one clear line and exit 1; a missing
# checkpoint is answered with the reason, which the evaluator prints.
set +e
err=$(printf 'not a request at all....' | (cd "$wc" && build/serve "$run/model.bin") 2>&1 >/dev/null)
status=$?
set -e
[ "$status" = 1 ] && grep -q '^serve: malformed request' <<<"$err" || fail "garbage: $status '$err'"
out=$(cd "$loop" && RATCHET_RUN_DIR=$run "$WITH_SERVER" \
  "cd $wc && exec build/serve $run/nothing.bin" trusted/evaluate) && fail "scored without a checkpoint"
grep -q '^FAIL: the model server refused .*cannot load the checkpoint: cannot open' <<<"$out" ||
  fail "missing checkpoint: $out"
echo "loop_e2e: ok (val_bpb $bpb, audit $audit)"
