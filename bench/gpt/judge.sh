#!/usr/bin/env bash
# What the fixed judge costs and whether it changes the score: the trainer
# as it was at REV (one process that trains and scores itself) next to the
# current workload (build/train saves a checkpoint; trusted/evaluate scores
# it through build/serve), taking turns ROUNDS times at the same budget on
# the real corpus. Each round also builds the candidate from scratch in a
# clean copy, as ratchet does for every experiment, and times it, the run
# and the verification separately.
#   flock /tmp/ratchet-bench.lock bench/gpt/judge.sh [REV] [ROUNDS] [BUDGET]
#   CLOCK=cpu ...: budgets in CPU time per thread (see below)
#   defaults: REV 1ba15b5 (before issue 13), 3 rounds, 60 s; OMP_NUM_THREADS=2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rev=${1:-1ba15b5}
rounds=${2:-3}
budget=${3:-60}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
# CLOCK=cpu: both trainers count CPU time per thread (GPT_CLOCK=cpu), which a
# busy shared machine disturbs much less than wall-clock time.
export GPT_CLOCK=${CLOCK:-wall}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
secs() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.1f", b - a }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
key() { awk -v k="$1:" '$1 == k {print $2}' "$2"; }

# Before: the old trainer, built in place with its data.
mkdir -p "$work/before"
git -C "$root" archive "$rev" workloads/gpt | tar -x -C "$work/before" --strip-components=2
make -C "$work/before" -s -j2 >/dev/null 2>&1
# After: a loop directory (trusted/, data/) and, per round, a clean copy.
loop=$work/loop
mkdir -p "$loop"
cp -r "$root/workloads/gpt/train.cpp" "$root/workloads/gpt/Makefile" "$root/workloads/gpt/prepare" "$loop/"
make -C "$loop" -s -j2 trusted >/dev/null
make -C "$loop" -s data >/dev/null 2>&1
cmp -s "$loop/data/val.bin" "$work/before/data/val.bin" || { echo "the two data sets differ" >&2; exit 1; }

echo "budget $budget s ($GPT_CLOCK clock), $OMP_NUM_THREADS threads, $(nproc) CPUs, before = $rev"
# old_eval: the after-model's weights scored by the old evaluator (windows
# of stride 256 instead of 257, no hidden probes), to tell the evaluator's
# change from the training noise.
printf '%-5s %-6s %9s %9s %6s %9s %7s %7s %7s %7s\n' round side val_bpb old_eval steps tok/s \
  build_s run_s verify_s load
for r in $(seq 1 "$rounds"); do
  l=$(load)
  t=$(secs)
  (cd "$work/before" && RATCHET_BUDGET_SECONDS=$budget RATCHET_RUN_DIR=$work/before build/train \
    >"$work/before.log" 2>&1)
  run_s=$(since "$t")
  printf '%-5s %-6s %9s %9s %6s %9s %7s %7s %7s %7s\n' "$r" before "$(key val_bpb "$work/before.log")" \
    - "$(key num_steps "$work/before.log")" \
    "$(awk '/^throughput:/ {print $2}' "$work/before.log")" - "$run_s" - "$l"

  wc=$work/wc$r run=$work/run$r
  mkdir -p "$wc" "$run"
  cp -r "$root/workloads/gpt/train.cpp" "$root/workloads/gpt/Makefile" "$root/workloads/gpt/prepare" "$wc/"
  l=$(load)
  t=$(secs)
  make -C "$wc" -s -j2 candidate >/dev/null
  build_s=$(since "$t")
  mkdir -p "$wc/data"
  ln -s "$loop/data/train.bin" "$loop/data/manifest.txt" "$loop/data/peak_gflops.txt" "$wc/data/"
  t=$(secs)
  (cd "$wc" && RATCHET_BUDGET_SECONDS=$budget RATCHET_RUN_DIR=$run build/train >"$run/run.log" 2>&1)
  run_s=$(since "$t")
  t=$(secs)
  (cd "$loop" && RATCHET_RUN_DIR=$run "$loop/prepare/with-server" \
    "cd $wc && exec build/serve $run/model.bin" trusted/evaluate >"$run/verify.log")
  verify_s=$(since "$t")
  python3 "$here/old_checkpoint.py" "$run/model.bin" "$run/old.bin"
  (cd "$work/before" && build/train --eval "$run/old.bin" >"$run/old_eval.log")
  printf '%-5s %-6s %9s %9s %6s %9s %7s %7s %7s %7s\n' "$r" after "$(key val_bpb "$run/verify.log")" \
    "$(key val_bpb "$run/old_eval.log")" "$(key num_steps "$run/run.log")" \
    "$(awk '/^throughput:/ {print $2}' "$run/run.log")" \
    "$build_s" "$run_s" "$verify_s" "$l"
done
