#!/usr/bin/env bash
# Four workers and the built-in search reach a target together: [run]
# workers = 4 on a two-constant toy (score (X-0.7)^2 + (Y-0.3)^2, runs of
# 0.3 s so that four are in flight). The loop stops at stop.target; the
# branch holds exactly the kept commits; results.tsv matches the ledger; no
# two experiments in flight at the same time tried the same point (the
# search proposes with the pending points).
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["params.env"]
protected = ["run.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "20s"
workers = 4
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 120
target = 0.004
[propose]
kind = "search"
[propose.search]
seed = 3
[[propose.search.param]]
name = "X"
type = "float"
low = 0.0
high = 1.0
[[propose.search.param]]
name = "Y"
type = "float"
low = 0.0
high = 1.0
TOML
printf 'X=0.1\nY=0.9\n' >"$L/params.env"
cat >"$L/run.sh" <<'SH'
. ./params.env
sleep 0.3
awk -v x="$X" -v y="$Y" 'BEGIN { print "---"; printf "score: %.6f\n", (x-0.7)^2 + (y-0.3)^2 }'
SH
git_init "$L"

out=$("$RATCHET" run "$L" 2>&1)
code=$?
[ "$code" = 0 ] || fail "ratchet run did not stop at the target (exit $code): $(echo "$out" | tail -3)"
expect_contains "$out" "reached stop.target" "stopped at the target"
best=$(sql "$L" "SELECT min(metric) FROM experiments WHERE status = 'keep'")
awk -v b="$best" 'BEGIN { exit !(b <= 0.004) }' || fail "best kept score $best is not at the target"
used=$(sql "$L" "SELECT count(DISTINCT worker) FROM experiments")
[ "$used" -ge 3 ] || fail "only $used of 4 worker slots used"

# The branch holds exactly the kept candidates, in the order they were kept.
start=$(sql "$L" "SELECT value FROM meta WHERE key='start_commit'")
kept=$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' AND baseline=0 ORDER BY finished_at DESC, id DESC")
expect_eq "$(git -C "$L" rev-list "$start..ratchet/main")" "$kept" "branch commits = kept candidates"

# results.tsv matches the ledger, row by row.
"$RATCHET" export "$L" --tsv "$WORK/results.tsv" || fail "export failed"
ledger_rows=$(sql "$L" "SELECT substr(candidate_commit,1,7) || ' ' || status FROM experiments ORDER BY id")
tsv_rows=$(tail -n +2 "$WORK/results.tsv" | awk -F'\t' '{print $1 " " $4}')
expect_eq "$tsv_rows" "$ledger_rows" "tsv matches ledger"
expect_eq "$(tail -n +2 "$WORK/results.tsv" | wc -l)" "$(sql "$L" "SELECT count(*) FROM experiments")" "tsv rows"

# No two experiments in flight at once tried the same point.
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments a JOIN experiments b ON a.id < b.id
  AND a.started_at < b.finished_at AND b.started_at < a.finished_at
  AND a.params != '' AND a.params = b.params")" "0" "no duplicate point in flight"
overlaps=$(sql "$L" "SELECT count(*) FROM experiments a JOIN experiments b ON a.id < b.id
  AND a.started_at < b.finished_at AND b.started_at < a.finished_at")
[ "$overlaps" -ge 10 ] || fail "only $overlaps overlapping pairs: the workers did not run at once"
audit=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit failed: $audit"
echo "experiments: $(sql "$L" "SELECT count(*) FROM experiments"), best $best, overlapping pairs $overlaps"
finish
