#!/usr/bin/env bash
# `ratchet init --template NAME DIR`: a template with a MANIFEST gets exactly
# the files it lists (here the GPT workload, taken from workloads/gpt), one
# without gets its folder's files; both as one commit on a clean tree. A
# MANIFEST naming a missing file is one clear error and leaves nothing.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

# The GPT template: what its MANIFEST lists, byte for byte.
L=$WORK/gpt
"$RATCHET" init --template gpt "$L" >/dev/null
expect_eq "$(cmp "$src/workloads/gpt/train.cpp" "$L/train.cpp" && echo same)" same "train.cpp copied"
expect_eq "$(diff -r "$src/workloads/gpt/prepare" "$L/prepare" && echo same)" same "prepare/ copied"
expect_eq "$(cmp "$src/templates/gpt/gitignore" "$L/.gitignore" >/dev/null 2>&1 || echo differs)" \
  differs ".gitignore has ratchet's lines added"
expect_contains "$(cat "$L/.gitignore")" ".ratchet" ".gitignore ignores .ratchet"
for absent in MANIFEST README.md CMakeLists.txt tests gitignore; do
  [ ! -e "$L/$absent" ] || fail "$absent should not be in the loop"
done
expect_eq "$(git -C "$L" status --porcelain)" "" "tree clean after init"
expect_eq "$(git -C "$L" rev-list --count HEAD)" 1 "one commit"
expect_eq "$(git -C "$L" ls-files | grep -c '^prepare/')" \
  "$(cd "$src/workloads/gpt/prepare" && find . -type f | wc -l)" "prepare/ committed"

# The toy template has no MANIFEST: its files, but not its README.
L=$WORK/toy
"$RATCHET" init --template toy "$L" >/dev/null
for f in ratchet.toml params.txt score.sh propose.sh program.md; do
  [ -f "$L/$f" ] || fail "toy: $f missing"
done

# A broken MANIFEST: one error line naming the file and line, nothing made.
home=$WORK/home
mkdir -p "$home/templates/broken"
printf 'ratchet.toml ratchet.toml\n' >"$home/templates/broken/MANIFEST"
: >"$home/ratchet.toml"
printf '# a comment\nno/such/file x\n' >>"$home/templates/broken/MANIFEST"
set +e
out=$(RATCHET_HOME=$home "$RATCHET" init --template broken "$WORK/broken" 2>&1)
code=$?
set -e
expect_eq "$code" 1 "broken MANIFEST exit code"
expect_contains "$out" "MANIFEST:3: $home/no/such/file does not exist" "broken MANIFEST message"
[ ! -e "$WORK/broken" ] || fail "a failed init left $WORK/broken behind"
finish
