#!/usr/bin/env bash
# A toy loop whose metric depends on a number in an editable file, with a
# scripted proposer: `ratchet run` reaches stop.target, the branch holds
# exactly the kept commits, and results.tsv matches the ledger.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["x.txt"]
protected = ["score.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 40
target = 0.0
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
echo 10 >"$L/x.txt"
cat >"$L/score.sh" <<'SH'
x=$(cat x.txt)
echo "progress: elapsed=0.1 x=$x"
echo "---"
echo "score: $(( (x - 3) * (x - 3) ))"
echo "peak_mem_mb: $((100 + x))"
SH
# Walks x down by one each time, with one step the wrong way: 9 8 11 7 6 5 4 3.
cat >"$L/propose.sh" <<'SH'
x=$(cat x.txt)
n=$RATCHET_EXPERIMENT
if [ "$n" -eq 4 ]; then new=$((x + 3)); else new=$((x - 1)); fi
echo "$new" > x.txt
echo "set x to $new"
SH
git_init "$L"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
expect_contains "$out" "stopped: reached stop.target 0: score 0" "stop reason"

expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" "9" "experiment count"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep keep discard keep keep keep keep keep" "statuses"
expect_eq "$(cat "$L/x.txt")" "3" "final x"
expect_eq "$(git -C "$L" rev-parse --abbrev-ref HEAD)" "ratchet/main" "branch checked out"
expect_eq "$(git -C "$L" status --porcelain)" "" "clean tree"

# The branch holds exactly the kept candidates (the baseline is the start commit).
kept=$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' AND baseline=0 ORDER BY id DESC")
branch=$(git -C "$L" rev-list ratchet/main | head -n "$(echo "$kept" | wc -l)")
expect_eq "$branch" "$kept" "branch commits = kept candidates"
start=$(sql "$L" "SELECT value FROM meta WHERE key='start_commit'")
expect_eq "$(git -C "$L" rev-list --count "$start..ratchet/main")" "$(echo "$kept" | wc -l)" "nothing else on the branch"
# The discarded candidate is reachable.
discarded=$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='discard'")
expect_eq "$(git -C "$L" rev-parse refs/ratchet/tried/4)" "$discarded" "discarded candidate ref"
expect_eq "$(git -C "$L" show "$discarded:x.txt")" "11" "discarded candidate content"

# results.tsv matches the ledger, row by row.
"$RATCHET" export "$L" --tsv "$WORK/results.tsv" || fail "export failed"
expect_eq "$(head -1 "$WORK/results.tsv")" "$(printf 'commit\tscore\tmemory_gb\tstatus\tdescription\tpeak_mem_mb')" "tsv header"
expect_eq "$(tail -n +2 "$WORK/results.tsv" | wc -l)" "9" "tsv rows"
ledger_rows=$(sql "$L" "SELECT substr(candidate_commit,1,7) || ' ' || printf('%.6f', metric) || ' ' || status || ' ' || description FROM experiments ORDER BY id")
tsv_rows=$(tail -n +2 "$WORK/results.tsv" | awk -F'\t' '{print $1 " " $2 " " $4 " " $5}')
expect_eq "$tsv_rows" "$ledger_rows" "tsv matches ledger"

# The read-only views agree.
log=$("$RATCHET" log "$L")
expect_eq "$(echo "$log" | wc -l)" "9" "log lines"
expect_contains "$log" "set x to 11" "log description"
status=$("$RATCHET" status "$L")
expect_contains "$status" "best:       #9 score=0" "status best"
expect_contains "$status" "keep 8" "status counts"
show=$("$RATCHET" show "$L" 4)
expect_contains "$show" "status:      discard" "show status"
expect_contains "$show" "+11" "show diff"
json=$("$RATCHET" log "$L" --json)
expect_contains "$json" "set x to 11" "log --json"
finish
