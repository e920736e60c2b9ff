#!/usr/bin/env bash
# Without the sandbox ([sandbox] required = false where bwrap does not work:
# here a bwrap that always fails), builds and runs are plain processes that
# can reach the loop's .git. After every step ratchet checks the refs, HEAD,
# config, hooks and info/ it owns, puts back what changed, and the
# experiment whose step did it is out of scope, however good its score.
# Each attack is one experiment's (mode.txt says which); every candidate
# scores better than the last, so an attack that went unnoticed would be
# kept.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
MARK=$WORK/fsmonitor-ran   # made if git ever runs a planted command
mkdir -p "$L" "$WORK/nobwrap"
printf '#!/bin/sh\nexit 1\n' >"$WORK/nobwrap/bwrap"
chmod +x "$WORK/nobwrap/bwrap"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["mode.txt", "x.txt"]
protected = ["run.sh", "build.sh", "attack.sh", "propose.sh", "ratchet.toml"]
[run]
build = "sh build.sh"
command = "sh run.sh"
budget = "1s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 7
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
[sandbox]
required = false
TOML
echo honest >"$L/mode.txt"
echo 100 >"$L/x.txt"
# attack WHAT: what a hostile step does to the loop's .git, by absolute path.
cat >"$L/attack.sh" <<SH
LOOP=$L
MARK=$MARK
SH
cat >>"$L/attack.sh" <<'SH'
mode=$(cat mode.txt)
case "$mode:$1" in
  fsmonitor:run) git -C "$LOOP" config core.fsmonitor "touch $MARK" ;;
  hooks:run)
    printf '#!/bin/sh\ntouch %s\n' "$MARK" >"$LOOP/.git/hooks/post-checkout"
    chmod +x "$LOOP/.git/hooks/post-checkout"
    git -C "$LOOP" config core.hooksPath "$LOOP/.git/hooks" ;;
  prune:run)
    git -C "$LOOP" for-each-ref --format='delete %(refname)' refs/ratchet/ |
      git -C "$LOOP" update-ref --stdin
    git -C "$LOOP" reflog expire --expire=now --all ;;
  branch:build)  # the loop branch moved to an earlier, unkept candidate
    git -C "$LOOP" update-ref "$(git -C "$LOOP" symbolic-ref HEAD)" \
      "$(git -C "$LOOP" rev-parse refs/ratchet/tried/2)" ;;
esac
SH
printf 'sh attack.sh build\n' >"$L/build.sh"
cat >"$L/run.sh" <<'SH'
sh attack.sh run
echo "---"
echo "score: $(cat x.txt)"
SH
# Experiment N: the Nth mode, and a better score than every one before.
cat >"$L/propose.sh" <<'SH'
set -- x fsmonitor hooks prune branch honest honest
shift $((RATCHET_EXPERIMENT - 1))
echo "$1" >mode.txt
echo $((100 - RATCHET_EXPERIMENT)) >x.txt
echo "$1"
SH
git_init "$L"

code=0
out=$(PATH="$WORK/nobwrap:$PATH" "$RATCHET" run "$L" 2>&1) || code=$?
expect_eq "$code" 3 "ratchet ends by its stop rule: $out"
expect_contains "$out" "a step changed ratchet's git state" "the user is told"
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep out_of_scope out_of_scope out_of_scope out_of_scope keep keep" "every attack is out of scope"
reason() { sql "$L" "SELECT reason FROM experiments WHERE id = $1"; }
expect_contains "$(reason 2)" ".git/config changed (put back)" "fsmonitor"
expect_contains "$(reason 3)" ".git/hooks/post-checkout added (removed)" "hook"
expect_contains "$(reason 3)" ".git/config changed (put back)" "hooksPath"
expect_contains "$(reason 4)" "refs/ratchet/tried/2 deleted (put back)" "pruned tried refs"
expect_contains "$(reason 4)" "refs/ratchet/tried/4 deleted (put back)" "its own tried ref too"
expect_contains "$(reason 5)" "moved to" "the forged branch move"
expect_eq "$(sql "$L" "SELECT count(*) FROM runs WHERE experiment_id = 5")" 0 "caught after the build, never run"
expect_eq "$(sql "$L" "SELECT count(*) FROM events WHERE kind = 'state_restored'")" 4 "each change recorded"
expect_contains "$(sql "$L" "SELECT warnings FROM experiments WHERE id = 6")" "ran without the sandbox" \
  "rows say they ran unsandboxed"

# Nothing of it is left in .git.
expect_eq "$(git -C "$L" config --get core.fsmonitor || echo none)" none "no fsmonitor"
expect_eq "$(git -C "$L" config --get core.hooksPath || echo none)" none "no hooksPath"
[ ! -e "$L/.git/hooks/post-checkout" ] || fail "the planted hook is still there"
git -C "$L" status --short >/dev/null
git -C "$L" checkout -q "$(git -C "$L" symbolic-ref --short HEAD)"
[ ! -e "$MARK" ] || fail "git ran a planted command"
# Nothing tried is lost: every candidate's ref names its commit.
for id in 2 3 4 5 6 7; do
  expect_eq "$(git -C "$L" rev-parse "refs/ratchet/tried/$id" 2>&1)" \
    "$(sql "$L" "SELECT candidate_commit FROM experiments WHERE id = $id")" "tried ref of #$id"
done
# The branch holds the kept commits only.
branch=$(git -C "$L" symbolic-ref --short HEAD)
expect_eq "$(git -C "$L" rev-parse "$branch")" \
  "$(sql "$L" "SELECT candidate_commit FROM experiments WHERE id = 7")" "the branch is at the last keep"
expect_eq "$(git -C "$L" rev-list --count "$branch")" 3 "the start and two keeps"
expect_eq "$(git -C "$L" status --porcelain)" "" "the loop directory is clean"
audit=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit failed: $audit"
finish
