#!/usr/bin/env bash
# The real corpus, when prepare/get-corpus has already fetched it (the test
# never downloads): six novels, in order, split with a manifest. Skips (77)
# otherwise.
#   prepare_janeausten.sh PREPARE GET_CORPUS
set -euo pipefail
prepare=$1 get_corpus=$2
cache=${GPT_CORPUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ratchet/janeaustenr}
[ -f "$cache/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb" ] ||
  { echo "corpus not fetched (run $get_corpus); skipping"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$prepare" --janeausten "$("$get_corpus")" --out "$dir/data"
head -c 21 "$dir/data/train.bin" | grep -q '^SENSE AND SENSIBILITY' || { echo "wrong first book" >&2; exit 1; }
grep -q 'It is a truth universally acknowledged' "$dir/data/train.bin" || { echo "no Pride and Prejudice" >&2; exit 1; }
tail -c 2000 "$dir/data/train.bin" | grep -q 'Persuasion\|Anne\|Wentworth' || { echo "wrong last book" >&2; exit 1; }
size=$(stat -c %s "$dir/data/train.bin")
[ "$size" -gt 3500000 ] || { echo "train split only $size bytes" >&2; exit 1; }
echo "prepare_janeausten: ok"
