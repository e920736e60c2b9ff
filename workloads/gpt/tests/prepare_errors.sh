#!/usr/bin/env bash
# prepare refuses bad input with one clear message each, and writes nothing.
#   prepare_errors.sh PREPARE
set -euo pipefail
prepare=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

expect_error() {  # expect_error "MESSAGE" ARGS...
  local want=$1
  shift
  if "$prepare" "$@" >out.txt 2>&1; then
    echo "prepare $* succeeded; expected: $want" >&2
    exit 1
  fi
  grep -qF "$want" out.txt || { echo "prepare $*: wanted '$want', got:" >&2; cat out.txt >&2; exit 1; }
  [ ! -e data/manifest.txt ] || { echo "prepare $* left a manifest" >&2; exit 1; }
}

expect_error "usage: prepare" --out data
expect_error "cannot read the Jane Austen corpus" --janeausten "$dir/no-such-package" --out data
expect_error "cannot open $dir/missing.txt" --text "$dir/missing.txt" --out data
: >empty.txt
expect_error "the corpus is empty" --text empty.txt --out data
printf 'caf\xe9 au lait\n' >latin1.txt
expect_error "not valid UTF-8 (first bad byte at offset 3)" --text latin1.txt --out data
for i in $(seq 1 50); do echo "a short line"; done >small.txt
expect_error "too small for context 256" --text small.txt --out data

# And a good file gives the three splits and a manifest that lists them.
for i in $(seq 1 2000); do echo "line $i: it is a truth universally acknowledged"; done >good.txt
"$prepare" --text good.txt --out data >out.txt
grep -q "train .*val .*audit" out.txt
for f in train.bin val.bin audit.bin; do
  grep -q "^file $f $(stat -c %s data/$f) $(sha256sum data/$f | cut -d' ' -f1)\$" data/manifest.txt
done
echo "prepare_errors: ok"
