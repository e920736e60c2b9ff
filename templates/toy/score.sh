#!/bin/sh
# The toy experiment: reads X from params.txt and scores it.
set -eu
x=$(sed -n 's/^X *= *\([-+0-9.eE]*\).*/\1/p' params.txt)
[ -n "$x" ] || { echo "params.txt has no 'X = <number>' line" >&2; exit 1; }
echo "progress: elapsed=0.0 x=$x"
awk -v x="$x" 'BEGIN { printf "---\nscore: %.6f\nx: %s\n", (x - 3.7) ^ 2, x }'
