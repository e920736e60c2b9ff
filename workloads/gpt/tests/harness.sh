# What ratchet does with the gpt template, in bash, for the workload's own
# tests until the engine does it (templates/gpt/ratchet.toml): a loop
# directory with trusted/ and data/ prepared once, a working copy with the
# candidate's build/, the run in a view that shows it the working copy, the
# training split and its run directory, and the judges talking to
# build/serve in a view that shows it its build and the run directory only.
# The views are bubblewrap sandboxes (no network, a private /tmp) when
# bubblewrap works here; VIEW=0 runs without them.
# Source it; it sets -euo pipefail and defines fail, view_ok and the steps.

set -euo pipefail
HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WITH_SERVER=$HARNESS_DIR/../prepare/with-server
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

fail() { echo "${0##*/}: $*" >&2; exit 1; }

# Whether the views are real (bubblewrap can make a sandbox here).
view_ok() {
  [ "${VIEW:-1}" != 0 ] && command -v bwrap >/dev/null &&
    bwrap --ro-bind / / --unshare-all --die-with-parent true 2>/dev/null
}

# The system part of every view: programs and libraries, read-only.
_system_view() {
  local d
  for d in /usr /etc; do printf '%s\n' --ro-bind "$d" "$d"; done
  for d in /bin /sbin /lib /lib64 /lib32; do
    if [ -L "$d" ]; then printf '%s\n' --symlink "$(readlink "$d")" "$d"
    elif [ -d "$d" ]; then printf '%s\n' --ro-bind "$d" "$d"; fi
  done
  printf '%s\n' --proc /proc --dev /dev --tmpfs /tmp --unshare-all --die-with-parent \
    --new-session --clearenv --setenv PATH /usr/bin:/bin --setenv HOME /tmp \
    --setenv OMP_NUM_THREADS "$OMP_NUM_THREADS"
  local v
  for v in RATCHET_BUDGET_SECONDS RATCHET_SEED RATCHET_EXPERIMENT RATCHET_ATTEMPT GPT_CLOCK \
      ATTACK_VAL ATTACK_IN_SERVE; do
    [ -z "${!v:-}" ] || printf '%s\n' --setenv "$v" "${!v}"
  done
}

# make_loop LOOP PREPARE PEAK EVALUATE GRADCHECK: a loop directory with the
# trusted programs and data/ from a small corpus (what [prepare] makes).
make_loop() {
  local loop=$1
  mkdir -p "$loop/trusted"
  cp "$2" "$loop/trusted/prepare"
  cp "$3" "$loop/trusted/peak"
  cp "$4" "$loop/trusted/evaluate"
  cp "$5" "$loop/trusted/gradcheck"
  small_corpus >"$loop/corpus.txt"
  "$loop/trusted/prepare" --text "$loop/corpus.txt" --out "$loop/data" >/dev/null
  "$loop/trusted/peak" --seconds 0.1 --rounds 1 --clock cpu >"$loop/data/peak_gflops.txt" 2>/dev/null
}

# working_copy WC FROM: a working copy holding the candidate build of FROM
# (a directory with build/train and build/serve).
working_copy() {
  mkdir -p "$1/build"
  cp "$2/build/train" "$2/build/serve" "$1/build/"
}

# scenario PREPARE PEAK EVALUATE GRADCHECK HONEST PLANTED: the set-up of a
# scenario: a work directory removed at exit, with $loop prepared, $honest
# and $wc working copies of the builds HONEST and PLANTED, $run for the run
# directory, and a 1-second CPU-time budget.
scenario() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  loop=$work/loop honest=$work/honest wc=$work/wc run=$work/run
  make_loop "$loop" "$1" "$2" "$3" "$4"
  working_copy "$honest" "$5"
  working_copy "$wc" "$6"
  export RATCHET_BUDGET_SECONDS=1 RATCHET_SEED=1 GPT_CLOCK=cpu
}

# A corpus of about 300 KB: several windows of val and audit.
small_corpus() {
  local i
  for i in $(seq 1 3000); do
    echo "Chapter $((i % 40)). It is a truth universally acknowledged, that a single man $((i * 7919 % 1000))."
  done
}

# run_train LOOP WC RUN: build/train in the run's view (the working copy,
# data/train.bin and data/manifest.txt read-only, RUN writable); its output
# goes to RUN/run.log. Returns its exit status.
run_train() {
  local loop=$1 wc=$2 run=$3
  mkdir -p "$run" "$wc/data"
  local status=0
  if view_ok; then
    local args
    mapfile -t args < <(_system_view)
    RATCHET_RUN_DIR=$run bwrap "${args[@]}" --ro-bind "$wc" "$wc" --tmpfs "$wc/data" \
      --ro-bind "$loop/data/train.bin" "$wc/data/train.bin" \
      --ro-bind "$loop/data/manifest.txt" "$wc/data/manifest.txt" \
      --ro-bind "$loop/data/peak_gflops.txt" "$wc/data/peak_gflops.txt" \
      --bind "$run" "$run" --setenv RATCHET_RUN_DIR "$run" --chdir "$wc" \
      build/train >"$run/run.log" 2>&1 || status=$?
  else
    (cd "$wc" && GPT_DATA_DIR=$loop/data RATCHET_RUN_DIR=$run build/train) >"$run/run.log" 2>&1 ||
      status=$?
  fi
  return $status
}

# serve_command WC RUN ARGS...: the shell command line of build/serve in
# its view: its build and RUN, read-only; cwd the working copy.
serve_command() {
  local wc=$1 run=$2
  shift 2
  local cmd
  if view_ok; then
    local args
    mapfile -t args < <(_system_view)
    cmd="bwrap"
    for a in "${args[@]}" --ro-bind "$wc/build" "$wc/build" ${run:+--ro-bind "$run" "$run"} \
        --chdir "$wc" build/serve "$@"; do
      cmd+=" $(printf '%q' "$a")"
    done
  else
    cmd="cd $(printf '%q' "$wc") && exec build/serve"
    for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
  fi
  echo "$cmd"
}

# verify LOOP WC RUN [SPLIT] [-2]: trusted/evaluate in the loop directory,
# its server in the serve view; prints the evaluator's output (the only
# place a score comes from). Returns the evaluator's exit status.
verify() {
  local loop=$1 wc=$2 run=$3 split=${4:-val} two=${5:-}
  (cd "$loop" && RATCHET_RUN_DIR=$run RATCHET_VERIFY_SPLIT=$split \
    "$WITH_SERVER" $two "$(serve_command "$wc" "$run" "$run/model.bin")" trusted/evaluate)
}

# gate LOOP WC: trusted/gradcheck against build/serve --gradcheck.
gate() {
  local loop=$1 wc=$2
  (cd "$loop" && "$WITH_SERVER" "$(serve_command "$wc" "" --gradcheck)" trusted/gradcheck)
}

# The metric of a judge's output: its val_bpb line, or nothing.
metric() { awk '/^val_bpb:/ {print $2}' <<<"$1"; }
