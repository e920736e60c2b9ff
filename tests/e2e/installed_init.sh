#!/usr/bin/env bash
# An installed ratchet works outside the source tree: `cmake --install`
# into a fresh prefix, then, from an unrelated folder and without
# RATCHET_HOME, `init --template gpt` and `--template toy` take their files
# from PREFIX/share/ratchet (a template that exists only there proves it),
# and `--version` names the same commit as the build tree's binary.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$(realpath "$RATCHET")")
prefix=$WORK/prefix

cmake --install "$build" --prefix "$prefix" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "cmake --install failed"; finish; }
bin=$prefix/bin/ratchet
data=$prefix/share/ratchet
[ -x "$bin" ] || fail "no $bin"
[ -f "$data/templates/gpt/MANIFEST" ] || fail "templates not installed in $data"
[ -x "$data/workloads/gpt/prepare/get-corpus" ] || fail "prepare/get-corpus not installed executable"

mkdir -p "$WORK/elsewhere"
cd "$WORK/elsewhere"
installed() { env -u RATCHET_HOME "$bin" "$@"; }

expect_eq "$(installed --version)" "$("$RATCHET" --version)" "installed --version"
expect_contains "$(installed --version)" "(commit " "--version names the commit"

installed init --template gpt gpt-loop >/dev/null || fail "installed init --template gpt"
expect_eq "$(cmp "$src/workloads/gpt/train.cpp" gpt-loop/train.cpp && echo same)" same "gpt: train.cpp"
expect_eq "$(diff -r "$src/workloads/gpt/prepare" gpt-loop/prepare && echo same)" same "gpt: prepare/"
[ -x gpt-loop/prepare/get-corpus ] || fail "gpt: prepare/get-corpus lost its executable bit"
expect_eq "$(git -C gpt-loop rev-list --count HEAD 2>&1)" 1 "gpt: one commit"
expect_eq "$(git -C gpt-loop status --porcelain)" "" "gpt: tree clean"

installed init --template toy toy-loop >/dev/null || fail "installed init --template toy"
for f in ratchet.toml params.txt score.sh propose.sh program.md; do
  [ -f "toy-loop/$f" ] || fail "toy: $f missing"
done
[ -x toy-loop/score.sh ] || fail "toy: score.sh lost its executable bit"

# Only the installed data has this template: the installed binary reads
# PREFIX/share/ratchet, not the source tree it was built from.
mkdir "$data/templates/only-installed"
echo x >"$data/templates/only-installed/file.txt"
installed init --template only-installed mine >/dev/null || fail "installed data not used"
expect_eq "$(cat mine/file.txt 2>&1)" x "template from the installed data"
set +e
out=$(env -u RATCHET_HOME "$RATCHET" init --template only-installed "$WORK/from-build" 2>&1)
set -e
expect_contains "$out" "no template 'only-installed'" "the build tree's binary reads the source tree"
finish
