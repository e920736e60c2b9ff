#!/usr/bin/env bash
# Crash safety: `ratchet run` is killed with SIGKILL at 20 random moments and
# resumed each time. Afterwards the ledger's ids are contiguous and unique,
# every experiment has exactly one terminal status, the branch tip is the
# best kept commit, and the working tree is clean. CRASH_WORKERS=N runs the
# loop with N experiments in flight (crash_safety_workers.sh: 4).
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
export CRASH_PGIDS=$WORK/pgids
: >"$CRASH_PGIDS"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt"]
protected = ["run.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "10s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 60
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
workers=${CRASH_WORKERS:-1}
sed -i "s/^timeout = \"10s\"\$/&\nworkers = $workers/" "$L/ratchet.toml"
grep -q "^workers = $workers\$" "$L/ratchet.toml" || fail "workers not set"
echo 50 >"$L/x.txt"
# Runs take 0 to 0.3 s, so kills land in every phase.
cat >"$L/run.sh" <<'SH'
echo "$(ps -o pgid= $$)" >> "$CRASH_PGIDS"
x=$(cat x.txt)
sleep "$(awk -v s="$RATCHET_EXPERIMENT" 'BEGIN { srand(s); printf "%.2f", rand() * 0.3 }')"
echo "---"
echo "score: $(( (x - 20) * (x - 20) ))"
SH
cat >"$L/propose.sh" <<'SH'
x=$(cat x.txt)
new=$(awk -v x="$x" -v s="$RATCHET_SEED" 'BEGIN { srand(s); printf "%d", x + int(rand() * 9) - 5 }')
echo "$new" > x.txt
echo "x $x -> $new"
SH
git_init "$L"

all_runs_dead() {
  while read -r pgid; do
    if pgrep -g "$pgid" >/dev/null 2>&1; then return 1; fi
  done <"$CRASH_PGIDS"
}

RANDOM=42
for i in $(seq 1 20); do
  "$RATCHET" run "$L" >>"$WORK/runs.log" 2>&1 &
  pid=$!
  # A random moment in the loop (this picks the kill point; it waits for nothing).
  sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The run's own processes die with ratchet (its supervisor kills them).
  wait_until 10 all_runs_dead || fail "kill $i: a run outlived ratchet"
done

"$RATCHET" run "$L" >>"$WORK/runs.log" 2>&1 || stopped_by_rule || fail "final run failed: $(tail -5 "$WORK/runs.log")"

n=$(sql "$L" "SELECT count(*) FROM experiments")
expect_eq "$n" "60" "experiments"
expect_eq "$(sql "$L" "SELECT min(id) || ' ' || max(id) || ' ' || count(DISTINCT id) FROM experiments")" "1 $n $n" "ids contiguous and unique"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE status = '' OR phase != 'done'")" "0" "every experiment decided and done"
expect_eq "$(sql "$L" "SELECT count(*) FROM (SELECT experiment_id FROM runs GROUP BY experiment_id HAVING count(*) > 1)")" "0" "no experiment ran twice"
interrupted=$(sql "$L" "SELECT count(*) FROM experiments WHERE status = 'interrupted'")
[ "$interrupted" -ge 1 ] || fail "no kill landed inside an experiment"
if [ "$workers" -gt 1 ]; then
  used=$(sql "$L" "SELECT count(DISTINCT worker) FROM experiments")
  [ "$used" -ge 2 ] || fail "only $used worker slot used with workers = $workers"
fi
# The tip is the best kept commit, and the kept metrics only improve.
best=$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' ORDER BY id DESC LIMIT 1")
expect_eq "$(git -C "$L" rev-parse ratchet/main)" "$best" "branch tip is the best kept commit"
expect_eq "$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' ORDER BY metric ASC, id DESC LIMIT 1")" "$best" "best metric is at the tip"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments a JOIN experiments b ON b.id > a.id WHERE a.status='keep' AND b.status='keep' AND b.metric >= a.metric")" "0" "keeps improve"
expect_eq "$(git -C "$L" status --porcelain)" "" "worktree clean"
expect_eq "$(git -C "$L" rev-parse --abbrev-ref HEAD)" "ratchet/main" "on the loop branch"
# Every candidate that was committed is still reachable.
for sha in $(sql "$L" "SELECT candidate_commit FROM experiments WHERE candidate_commit != ''"); do
  git -C "$L" cat-file -e "$sha^{commit}" || fail "candidate $sha lost"
done

# A kill inside a git write leaves its lock file (an empty NAME.lock), and
# git refuses every later write of NAME while it is there. A random kill
# lands there rarely, so plant what it leaves: resuming removes the locks
# (the loop lock is held; no other writer can own them) and goes on.
: >"$L/.git/refs/heads/ratchet/main.lock"
: >"$L/.git/index.lock"
out=$("$RATCHET" run "$L" --max-experiments 62 2>&1) || stopped_by_rule || fail "run after planted git locks failed: $out"
expect_contains "$out" "removed $L/.git/refs/heads/ratchet/main.lock, left by a git write that never finished" "ref lock removed"
expect_contains "$out" "removed $L/.git/index.lock" "index lock removed"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE phase = 'done'")" "62" "the loop went on"
expect_eq "$(git -C "$L" rev-parse ratchet/main)" \
  "$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' ORDER BY id DESC LIMIT 1")" "tip after the locks"
expect_eq "$(git -C "$L" status --porcelain)" "" "worktree clean after the locks"
echo "kills: 20, workers: $workers, interrupted experiments: $interrupted"
finish
