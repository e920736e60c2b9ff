#!/usr/bin/env bash
# `ratchet finalize`: a loop with 10 keeps (a script proposer tuning five
# parameters that sit far apart in one file, two steps each, with a discard
# in between) becomes a series of 5 clean commits, one per parameter, on a
# new branch whose tip has exactly the tree of the loop's best commit; each
# message gives the measured effect and names its experiments; the loop
# branch does not move.
source "$(dirname "$0")/lib.sh"

L=$WORK/fin
mkdir -p "$L"
{
  for p in a b c d e; do
    echo "$p = 0"
    for i in 1 2 3 4 5 6; do echo "# notes about $p, line $i"; done
  done
} >"$L/params.txt"
cat >"$L/score.sh" <<'SH'
# score: distance of (a, b, c, d, e) from (2, 2, 2, 2, 2)
awk '/^[a-e] = / { d = $3 - 2; s += (d < 0 ? -d : d) } END { print "---"; print "score: " s }' params.txt
SH
# Experiment n moves one parameter by one: a, a, b, b, c (too far: discarded), c, c, d, d, e, e.
cat >"$L/propose.sh" <<'SH'
plan="2:a:1 3:a:2 4:b:1 5:b:2 6:c:9 7:c:1 8:c:2 9:d:1 10:d:2 11:e:1 12:e:2"
for step in $plan; do
  n=${step%%:*}; rest=${step#*:}; p=${rest%%:*}; v=${rest#*:}
  if [ "$n" = "$RATCHET_EXPERIMENT" ]; then
    sed -i "s/^$p = .*/$p = $v/" params.txt
    echo "set $p to $v"
    exit 0
  fi
done
echo "nothing planned" >&2
exit 1
SH
cat >"$L/ratchet.toml" <<'TOML'
[loop]
tag = "fin"
[edit]
files = ["params.txt"]
protected = ["score.sh", "propose.sh"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 12
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
git_init "$L"
out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "run failed: $out"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE status='keep' AND NOT baseline")" 10 "10 keeps"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id=6")" "discard" "#6 discarded"

loop_tip=$(git -C "$L" rev-parse ratchet/fin)
best=$(sql "$L" "SELECT candidate_commit FROM experiments WHERE status='keep' ORDER BY id DESC LIMIT 1")
start=$(git -C "$L" rev-parse main)
head_before=$(git -C "$L" rev-parse HEAD)
out=$("$RATCHET" finalize "$L") || fail "finalize failed: $out"
expect_contains "$out" "wrote branch ratchet/fin-final: 5 commits from 10 kept experiments" "finalize summary"
expect_eq "$(git -C "$L" rev-parse 'ratchet/fin-final^{tree}')" "$(git -C "$L" rev-parse "$best^{tree}")" \
  "the tip's tree is the best commit's"
expect_eq "$(git -C "$L" rev-parse ratchet/fin)" "$loop_tip" "the loop branch is unchanged"
expect_eq "$(git -C "$L" rev-parse HEAD)" "$head_before" "HEAD is unchanged"
expect_eq "$(git -C "$L" status --porcelain)" "" "the tree is clean"
expect_eq "$(git -C "$L" rev-list --count "$start..ratchet/fin-final")" 5 "five commits"
expect_eq "$(git -C "$L" merge-base ratchet/fin-final main)" "$start" "the series starts where the loop began"
# One commit per parameter, oldest first, each naming its experiments and effect.
expect_eq "$(git -C "$L" log --reverse --format=%s "$start..ratchet/fin-final" | tr '\n' '|')" \
  "set a to 1 (and 1 more step on the same lines)|set b to 1 (and 1 more step on the same lines)|set c to 1 (and 1 more step on the same lines)|set d to 1 (and 1 more step on the same lines)|set e to 1 (and 1 more step on the same lines)|" \
  "subjects"
expect_eq "$(git -C "$L" log --reverse --format=%B "$start..ratchet/fin-final" | sed -n 's/^Ratchet-Experiments: //p' | tr '\n' '|')" \
  "2, 3|4, 5|7, 8|9, 10|11, 12|" "each commit names its experiments"
third=$(git -C "$L" log --reverse --format=%B "$start..ratchet/fin-final" | awk '/^set c to 1/,/^Ratchet-Experiments/')
expect_contains "$third" "Measured effect: score 6 -> 4 (lower is better)" "the measured effect"
expect_contains "$third" "- #7 keep, score 5: set c to 1 (loop commit" "an experiment behind it"
expect_contains "$third" "Tried from the same states and not kept: #6 discard." "what was tried and not kept"
# Each commit changes only its own parameter.
expect_eq "$(git -C "$L" diff ratchet/fin-final~3 ratchet/fin-final~2 | grep -c '^[-+][a-e] = ')" 2 "one parameter per commit"
# A second finalize does not overwrite the branch; another name works.
set +e
out=$("$RATCHET" finalize "$L" 2>&1)
code=$?
set -e
expect_eq "$code" 1 "the branch exists: exit code"
expect_contains "$out" "branch ratchet/fin-final exists already" "the branch exists"
"$RATCHET" finalize "$L" --branch review/fin >/dev/null || fail "finalize --branch failed"
expect_eq "$(git -C "$L" rev-parse 'review/fin^{tree}')" "$(git -C "$L" rev-parse "$best^{tree}")" "--branch: same tree"
finish
