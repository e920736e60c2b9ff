#!/usr/bin/env bash
# The Slurm executor ([executor] kind = "slurm") on a real one-machine
# cluster (tests/slurm/cluster): build and runs are Slurm jobs.
#  1. A toy loop with 4 workers reaches its target with 4 jobs at once; the
#     branch holds exactly the kept commits; results.tsv matches the ledger;
#     every run ran inside a job of its own.
#  2. A run past its timeout is ended and recorded as a timeout; no job of
#     it is left running.
#  3. kill -9 of ratchet while 4 run jobs run: the restart reattaches to
#     them (no job is submitted again, none is cancelled), their experiments
#     are decided on those runs, and the loop goes on to its end.
#  4. kill -9 while 2 builds run as jobs: the restart reattaches to them
#     (neither is submitted again nor cancelled) and their experiments are
#     decided.
#  5. The same with 2 gate jobs running: the gates are reattached, and the
#     builds before them, which had passed, do not run again.
#  6. The same with 2 confirm runs of would-be keeps running.
#  7. The same with the run of a `ratchet rerun`, which is still run in full.
source "$(dirname "$0")/lib.sh"

for tool in munged slurmctld slurmd sbatch squeue scancel; do
  if ! command -v "$tool" >/dev/null; then
    msg="$tool is missing: install slurm-wlm and munge (scripts/install-deps --for test)"
    [ "${RATCHET_REQUIRE_SLURM:-}" = 1 ] && { fail "$msg"; finish; }
    echo "SKIP [$SCENARIO]: $msg"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  [ "${RATCHET_REQUIRE_SLURM:-}" = 1 ] && { fail "slurmd needs root"; finish; }
  echo "SKIP [$SCENARIO]: the test cluster's slurmd needs root"
  exit 77
fi

CLUSTER=$WORK/cluster
trap '_code=$?; "$RATCHET_HOME/tests/slurm/cluster" stop "$CLUSTER" >/dev/null 2>&1 || true; (exit $_code); cleanup' EXIT
eval "$("$RATCHET_HOME/tests/slurm/cluster" start "$CLUSTER")" || { fail "the test cluster did not start"; finish; }

# live_jobs: jobs pending or running, one id per line.
live_jobs() { squeue -h -t pending,running,completing -o %i; }

# make_loop DIR WORKERS TIMEOUT STOP RUN_BODY [BUILD] [GATE]: a one-parameter
# search toy; GATE is the command of a before gate named "check".
make_loop() {
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[edit]
files = ["params.env"]
protected = ["run.sh", "ratchet.toml"]
[run]
build = "${6:-echo built in job \$SLURM_JOB_ID}"
command = "sh run.sh"
budget = "1s"
timeout = "$3"
grace = "1s"
workers = $2
[executor]
kind = "slurm"
[metric]
name = "score"
goal = "min"
[stop]
$4
[propose]
kind = "search"
[propose.search]
seed = 5
[[propose.search.param]]
name = "X"
type = "float"
low = 0.0
high = 1.0
TOML
  [ -z "${7:-}" ] || printf '[[gate]]\nname = "check"\ncommand = "%s"\n' "$7" >>"$1/ratchet.toml"
  printf 'X=0.05\n' >"$1/params.env"
  printf '%s\n' ". ./params.env" "echo \"job \$SLURM_JOB_ID\"" "$5" \
    "awk -v x=\"\$X\" 'BEGIN { print \"---\"; printf \"score: %.6f\\n\", (x-0.7)^2 }'" >"$1/run.sh"
  git_init "$1"
}

# --- 1. four workers through Slurm reach the target ---------------------
A=$WORK/a
make_loop "$A" 4 "20s" $'max_experiments = 80\ntarget = 0.0004' "sleep 0.5"
code=0
out=$("$RATCHET" run "$A" 2>&1) || code=$?
[ "$code" = 0 ] || fail "the Slurm loop did not stop at its target (exit $code): $(echo "$out" | tail -3)"
expect_contains "$out" "reached stop.target" "stopped at the target"
start=$(sql "$A" "SELECT value FROM meta WHERE key='start_commit'")
kept=$(sql "$A" "SELECT candidate_commit FROM experiments WHERE status='keep' AND baseline=0 ORDER BY finished_at DESC, id DESC")
expect_eq "$(git -C "$A" rev-list "$start..ratchet/main")" "$kept" "branch commits = kept candidates"
"$RATCHET" export "$A" --tsv "$WORK/a.tsv" || fail "export failed"
expect_eq "$(tail -n +2 "$WORK/a.tsv" | awk -F'\t' '{print $1 " " $4}')" \
  "$(sql "$A" "SELECT substr(candidate_commit,1,7) || ' ' || status FROM experiments ORDER BY id")" \
  "tsv matches ledger"
runs=$(sql "$A" "SELECT count(*) FROM experiments WHERE status IN ('keep','discard')")
jobs=$(cat "$A"/.ratchet/runs/*/run.log | grep -c '^job [0-9][0-9]*$' || true)
expect_eq "$jobs" "$runs" "every run printed its own SLURM_JOB_ID"
distinct=$(cat "$A"/.ratchet/runs/*/run.log | grep '^job [0-9]' | sort -u | wc -l)
expect_eq "$distinct" "$runs" "each run was a job of its own"
grep -q '^built in job [0-9]' "$A"/.ratchet/runs/*/build.log || fail "the build did not run as a job"
overlaps=$(sql "$A" "SELECT count(*) FROM experiments a JOIN experiments b ON a.id < b.id
  AND a.started_at < b.finished_at AND b.started_at < a.finished_at")
[ "$overlaps" -ge 6 ] || fail "only $overlaps overlapping pairs: the jobs did not run at once"
# Four at once: some instant where four experiments were in flight.
four=$(sql "$A" "SELECT count(*) FROM experiments a WHERE (SELECT count(*) FROM experiments b
  WHERE b.started_at <= a.started_at AND b.finished_at > a.started_at) >= 4")
[ "$four" -ge 1 ] || fail "never 4 experiments in flight at once"
expect_eq "$(live_jobs)" "" "no job left after the loop"
echo "1: $(sql "$A" "SELECT count(*) FROM experiments") experiments, $jobs run jobs, $overlaps overlapping pairs"

# --- 2. a run past its deadline ------------------------------------------
B=$WORK/b
make_loop "$B" 1 "2s" "max_experiments = 1" "sleep 60"
out=$("$RATCHET" run "$B" 2>&1) || true
expect_eq "$(sql "$B" "SELECT status FROM experiments WHERE id = 1")" "timeout" "the slow run's status"
wall=$(sql "$B" "SELECT finished_at - started_at FROM experiments WHERE id = 1")
awk -v w="$wall" 'BEGIN { exit !(w < 30) }' || fail "the slow run took ${wall}s: not cut at its deadline"
expect_eq "$(live_jobs)" "" "no job of the slow run left"

# --- 3. kill -9 of ratchet with four run jobs running ---------------------
C=$WORK/c
make_loop "$C" 4 "60s" "max_experiments = 9" "sleep 4"
"$RATCHET" run "$C" >"$WORK/c1.out" 2>&1 &
pid=$!
four_running() { [ "$(squeue -h -t running -n ratchet-run -o %i | wc -l)" -ge 4 ]; }
wait_until 60 four_running || fail "never 4 run jobs at once"
before=$(squeue -h -t running -n ratchet-run -o %i | sort)
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
out=$("$RATCHET" run "$C" 2>&1) || stopped_by_rule || fail "the resumed run failed: $(echo "$out" | tail -3)"
reattached=$(echo "$out" | grep -c "reattached to its run" || true)
[ "$reattached" -ge 4 ] || fail "only $reattached runs reattached: $(echo "$out" | head -8)"
expect_not_contains "$out" "cancelled slurm job" "no run job of the killed session cancelled"
for id in $before; do
  # Each ran to its end, once, and its experiment was decided on it.
  expect_eq "$(squeue -h -t all -j "$id" -o %T)" "COMPLETED" "job $id completed"
  log=$(grep -lx "job $id" "$C"/.ratchet/runs/*/run.log | head -1)
  [ -n "$log" ] || { fail "no run log holds job $id"; continue; }
  exp_id=$(basename "$(dirname "$log")")
  expect_eq "$(grep -c '^job ' "$log")" "1" "#$exp_id's run log is one job's"
  status=$(sql "$C" "SELECT status FROM experiments WHERE id = $exp_id")
  case $status in keep|discard) ;; *) fail "#$exp_id of job $id is $status, not decided on its run" ;; esac
  expect_eq "$(sql "$C" "SELECT count(*) FROM runs WHERE experiment_id = $exp_id AND attempt = 1")" \
    "1" "#$exp_id recorded its run once"
done
expect_eq "$(sql "$C" "SELECT count(*) FROM experiments WHERE status = 'interrupted'")" "0" \
  "nothing interrupted"
jobs=$(cat "$C"/.ratchet/runs/*/run.log | grep '^job [0-9]' | wc -l)
distinct=$(cat "$C"/.ratchet/runs/*/run.log | grep '^job [0-9]' | sort -u | wc -l)
expect_eq "$jobs" "$distinct" "no run was submitted twice"
expect_eq "$(sql "$C" "SELECT count(*) FROM experiments WHERE phase != 'done'")" "0" "every experiment done"
start=$(sql "$C" "SELECT value FROM meta WHERE key='start_commit'")
kept=$(sql "$C" "SELECT candidate_commit FROM experiments WHERE status='keep' AND baseline=0 ORDER BY finished_at DESC, id DESC")
expect_eq "$(git -C "$C" rev-list "$start..ratchet/main")" "$kept" "resumed: branch commits = kept candidates"
expect_eq "$(live_jobs)" "" "no job left after the resumed loop"
echo "3: $reattached reattached, $(sql "$C" "SELECT count(*) FROM experiments") experiments"

# --- 4. to 6. kill -9 of ratchet with two build, gate or confirm jobs ----
# slow_step_resumed DIR STEP WHAT NOTE: ratchet is killed while two STEP
# jobs (ratchet-STEP) of candidates run, and restarted; it says "reattached
# to its NOTE" for each, the jobs are followed to their end, once each, and
# their experiments decided. Each STEP prints "WHAT in job <id>" into its log.
slow_step_resumed() {
  local dir=$1 step=$2 what=$3 note=$4
  "$RATCHET" run "$dir" >"$dir.out1" 2>&1 &
  local pid=$!
  two_at_it() { [ "$(squeue -h -t running -n "ratchet-$step" -o %i | wc -l)" -ge 2 ]; }
  wait_until 60 two_at_it || fail "never 2 $step jobs at once: $(tail -3 "$dir.out1")"
  local before
  before=$(squeue -h -t running -n "ratchet-$step" -o %i | sort)
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  out=$("$RATCHET" run "$dir" 2>&1) || stopped_by_rule || fail "the resumed run failed: $(echo "$out" | tail -3)"
  expect_eq "$(echo "$out" | grep -c "reattached to its $note, still on the executor" || true)" \
    "2" "both $step jobs reattached"
  expect_not_contains "$out" "cancelled slurm job" "no job of the killed session cancelled"
  local id log exp_id status
  for id in $before; do
    expect_eq "$(squeue -h -t all -j "$id" -o %T)" "COMPLETED" "$step job $id completed"
    log=$(grep -lx "$what in job $id" "$dir"/.ratchet/runs/*/"$step".log | head -1)
    [ -n "$log" ] || { fail "no $step log holds job $id"; continue; }
    exp_id=$(basename "$(dirname "$log")")
    expect_eq "$(grep -c "^$what in job" "$log")" "1" "#$exp_id's $step log is one job's"
    status=$(sql "$dir" "SELECT status FROM experiments WHERE id = $exp_id")
    case $status in keep|discard) ;; *) fail "#$exp_id of $step job $id is $status, not decided" ;; esac
    expect_eq "$(grep -c '^built in job' "$(dirname "$log")/build.log")" "1" \
      "#$exp_id built once"
  done
  expect_eq "$(sql "$dir" "SELECT count(*) FROM experiments WHERE status = 'interrupted'")" "0" \
    "nothing interrupted"
  expect_eq "$(sql "$dir" "SELECT count(*) FROM experiments WHERE phase != 'done'")" "0" \
    "every experiment done"
  expect_eq "$(live_jobs)" "" "no job left after the resumed loop"
  echo "$step: $(echo "$before" | wc -l) jobs reattached"
}

# The baseline (X=0.05) builds and passes its gate at once; candidates'
# builds (4.) or gates (5.) take 6 s.
slow='. ./params.env; case $X in 0.05) ;; *) sleep 6 ;; esac'
D=$WORK/d
make_loop "$D" 2 "60s" "max_experiments = 3" "true" "$slow; echo built in job \$SLURM_JOB_ID"
slow_step_resumed "$D" build "built" "build"
E=$WORK/e
make_loop "$E" 2 "60s" "max_experiments = 3" "true" "" "$slow; echo checked in job \$SLURM_JOB_ID"
slow_step_resumed "$E" gate-check "checked" "gate check"
# 6.: would-be keeps (every X above 0.05) confirm with a run that takes 6 s.
F=$WORK/f
make_loop "$F" 2 "60s" $'max_experiments = 3\n[accept]\nconfirm = 1' \
  'if [ "$RATCHET_ATTEMPT" -ge 2 ]; then sleep 6; echo "confirmed in job $SLURM_JOB_ID"; fi'
slow_step_resumed "$F" run-2 "confirmed" "confirm run"

# --- 7. kill -9 while a `ratchet rerun` of a discarded change runs ---------
# The baseline is the optimum (X=0.7), so #2 is discarded; #3 runs #2's
# change again in full, and its run takes 6 s.
G=$WORK/g
make_loop "$G" 1 "60s" "max_experiments = 2" \
  'if [ "$RATCHET_EXPERIMENT" = 3 ]; then sleep 6; echo "reran in job $SLURM_JOB_ID"; fi'
printf 'X=0.7\n' >"$G/params.env"
git -C "$G" commit -qam "the optimum" || fail "commit failed"
out=$("$RATCHET" run "$G" 2>&1) || stopped_by_rule || fail "the first session failed: $(echo "$out" | tail -3)"
expect_eq "$(sql "$G" "SELECT status FROM experiments WHERE id = 2")" "discard" "#2 discarded"
"$RATCHET" rerun "$G" 2 >/dev/null 2>&1 || fail "ratchet rerun 2 was refused"
"$RATCHET" run "$G" --max-experiments 3 >"$WORK/g1.out" 2>&1 &
pid=$!
rerun_running() { [ -n "$(squeue -h -t running -n ratchet-run -o %i)" ] &&
  [ "$(sql "$G" "SELECT count(*) FROM experiments WHERE id = 3")" = 1 ]; }
wait_until 60 rerun_running || fail "the rerun's run never ran: $(tail -3 "$WORK/g1.out")"
job=$(squeue -h -t running -n ratchet-run -o %i)
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
out=$("$RATCHET" run "$G" --max-experiments 3 2>&1) || stopped_by_rule ||
  fail "the resumed run failed: $(echo "$out" | tail -3)"
expect_contains "$out" "#3: reattached to its run, still on the executor" "the rerun reattached"
expect_not_contains "$out" "cancelled slurm job" "its job was not cancelled"
expect_eq "$(squeue -h -t all -j "$job" -o %T)" "COMPLETED" "the rerun's job $job completed"
expect_eq "$(grep -c '^reran in job' "$G/.ratchet/runs/3/run.log")" "1" "the rerun ran once"
expect_eq "$(sql "$G" "SELECT proposer || ' ' || status FROM experiments WHERE id = 3")" \
  "rerun discard" "#3, the rerun, decided on that run"
expect_eq "$(live_jobs)" "" "no job left after the rerun"
echo "7: the rerun's job $job reattached"
finish
