#!/usr/bin/env bash
# Speed of workloads/gpt/train.cpp: its training throughput next to the same
# model and optimiser in PyTorch (Debian's python3-torch, torch_gpt.py), on
# the same data with the same number of threads, and its achieved FLOP/s next
# to this machine's fp32 peak measured by prepare/peak. The programs take
# turns, ROUNDS times, so that all of them see the same machine load; every
# row is printed, then the medians.
#   bench/gpt/run.sh [ROUNDS] [SECONDS]      defaults: 3 rounds of 20 s
#   OMP_NUM_THREADS (default 2), PYTHON (default /usr/bin/python3)
#   CLOCK=cpu: every program measures CPU time per thread instead of wall-clock
#   time (train.cpp's GPT_CLOCK=cpu, peak --clock cpu, torch_gpt.py --clock
#   cpu), which a busy shared machine disturbs much less.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpt=$(cd "$here/../../workloads/gpt" && pwd)
rounds=${1:-3}
seconds=${2:-20}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
python=${PYTHON:-/usr/bin/python3}
clock=${CLOCK:-wall}

make -C "$gpt" -s -j2 candidate trusted/peak data/manifest.txt >/dev/null
openblas=$("$here/get-openblas")
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT

torch_run() {  # torch_run ENV... : tokens/s
  env "$@" "$python" "$here/torch_gpt.py" --train-cpp "$gpt/train.cpp" --data "$gpt/data/train.bin" \
    --threads "$OMP_NUM_THREADS" --seconds "$seconds" --clock "$clock" | tee -a "$run/torch.log" |
    sed -E 's/^torch: ([0-9]+) tokens\/s.*/\1/'
}

echo "threads $OMP_NUM_THREADS, $seconds s ($clock clock) per measurement, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %10s %11s %11s %8s %14s %14s %8s\n' round peak_GF cpp_tok/s cpp_GF cpp_%pk \
  torch_tok/s torch2_tok/s speedup
for r in $(seq 1 "$rounds"); do
  peak=$("$gpt/trusted/peak" --seconds 1 --rounds 3 --clock "$clock" 2>/dev/null)
  line=$(cd "$run" && GPT_CLOCK="$clock" GPT_DATA_DIR="$gpt/data" RATCHET_BUDGET_SECONDS="$seconds" \
    RATCHET_RUN_DIR="$run" \
    "$gpt/build/train" | tee -a "$run/cpp.log" | grep '^throughput:')
  cpp_tok=$(echo "$line" | sed -E 's/throughput: ([0-9]+) tokens.*/\1/')
  cpp_gf=$(echo "$line" | sed -E 's/.*tokens\/s, ([0-9.]+) GFLOP.*/\1/')
  # PyTorch on OpenBLAS twice: with this machine's OpenBLAS settings
  # (OPENBLAS_CORETYPE etc. as set), and with OpenBLAS's own choice of kernels.
  t1=$(torch_run LD_LIBRARY_PATH="$openblas")
  t2=$(torch_run -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE LD_LIBRARY_PATH="$openblas")
  best=$((t1 > t2 ? t1 : t2))
  printf '%-5s %10s %11s %11s %8s %14s %14s %8s\n' "$r" "$peak" "$cpp_tok" "$cpp_gf" \
    "$(awk -v a="$cpp_gf" -v b="$peak" 'BEGIN{printf "%.1f", 100*a/b}')" "$t1" "$t2" \
    "$(awk -v a="$cpp_tok" -v b="$best" 'BEGIN{printf "%.2f", a/b}')" | tee -a "$run/rows"
done
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "median cpp % of peak: $(awk '{print $5}' "$run/rows" | median)," \
  "median speedup over the faster PyTorch: $(awk '{print $8}' "$run/rows" | median)x"
echo "model: $(grep '^model:' "$run/cpp.log" | head -1)"
echo "torch: $(tail -1 "$run/torch.log")"
