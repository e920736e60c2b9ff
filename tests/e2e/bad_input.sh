#!/usr/bin/env bash
# Bad input: each gets one clear error line and a non-zero exit, and nothing
# is written (no .ratchet folder, no branch, the tree untouched).
source "$(dirname "$0")/lib.sh"

good_toml='[edit]
files = ["x.txt"]
[run]
command = "echo --- ; echo score: 1"
budget = "5s"
[propose.script]
command = "true"
[metric]
name = "score"
goal = "min"'

# expect_refused NAME EXPECTED_TEXT: runs ratchet on $WORK/NAME and checks.
expect_refused() {
  local dir=$WORK/$1 want=$2
  local head_before
  head_before=$(git -C "$dir" rev-parse HEAD 2>/dev/null || echo none)
  set +e
  local out
  out=$("$RATCHET" run "$dir" 2>&1)
  local code=$?
  set -e
  [ "$code" -ne 0 ] || fail "$1: exit code 0"
  expect_eq "$(printf '%s\n' "$out" | wc -l)" "1" "$1: one line of error"
  expect_contains "$out" "$want" "$1: message"
  [ ! -e "$dir/.ratchet" ] || fail "$1: .ratchet was created"
  if [ -d "$dir/.git" ]; then
    expect_eq "$(git -C "$dir" rev-parse HEAD)" "$head_before" "$1: HEAD moved"
    expect_eq "$(git -C "$dir" branch --list 'ratchet/*')" "" "$1: a branch was made"
  fi
}

# make_loop NAME TOML: a committed loop directory.
make_loop() {
  mkdir -p "$WORK/$1"
  printf '%s\n' "$2" >"$WORK/$1/ratchet.toml"
  echo 1 >"$WORK/$1/x.txt"
  git_init "$WORK/$1"
}

make_loop malformed "$(printf '%s\n' "$good_toml" | sed 's/^goal = "min"/goal = "min/')"
expect_refused malformed "ratchet.toml:10:"

make_loop unknown_key "$good_toml
bugdet = 3"
expect_refused unknown_key "unknown key 'bugdet' in [metric]; allowed:"

make_loop negative_budget "$(printf '%s\n' "$good_toml" | sed 's/budget = "5s"/budget = "-5s"/')"
expect_refused negative_budget "[run] budget: must be a positive duration"

make_loop no_command "$(printf '%s\n' "$good_toml" | grep -v '^command')"
expect_refused no_command "[run] command: missing"

mkdir -p "$WORK/not_git"
printf '%s\n' "$good_toml" >"$WORK/not_git/ratchet.toml"
expect_refused not_git "is not a git repository"

make_loop no_script "$(printf '%s\n' "$good_toml" | grep -v '^\[propose.script\]' | grep -v '^command = "true"')"
expect_refused no_script "ratchet.toml: [propose.script] command: missing"

make_loop dirty "$good_toml"
echo 2 >"$WORK/dirty/x.txt"
expect_refused dirty "uncommitted changes (x.txt)"
expect_eq "$(cat "$WORK/dirty/x.txt")" "2" "dirty: the user's change is kept"

mkdir -p "$WORK/no_toml"
expect_refused no_toml "has no ratchet.toml"

make_loop unknown_proposer "$good_toml
[propose]
kind = \"serch\""
expect_refused unknown_proposer "unknown proposer 'serch'"

set +e
out=$("$RATCHET" run "$WORK/does-not-exist" 2>&1)
code=$?
set -e
[ "$code" -ne 0 ] || fail "missing dir: exit 0"
expect_contains "$out" "No such file or directory" "missing dir"
finish
