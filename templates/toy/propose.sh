#!/bin/sh
# A scripted proposer: moves X by a random step and says so on its last line.
# ratchet gives it RATCHET_SEED and RATCHET_EXPERIMENT; the step shrinks as
# the loop goes on.
set -eu
x=$(sed -n 's/^X *= *\([-+0-9.eE]*\).*/\1/p' params.txt)
new=$(awk -v x="$x" -v seed="${RATCHET_SEED:-1}" -v n="${RATCHET_EXPERIMENT:-2}" \
  'BEGIN { srand(seed); step = 4 / sqrt(n); printf "%.4f", x + (2 * rand() - 1) * step }')
sed "s/^X *= *[-+0-9.eE]*/X = $new/" params.txt > params.txt.new && mv params.txt.new params.txt
echo "move X from $x to $new"
