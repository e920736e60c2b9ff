#!/usr/bin/env bash
# The default workload through the real binary, as a user gets it: `ratchet
# init --template gpt`, a tiny budget, the built-in search, every step
# sandboxed ([sandbox] required is the default). [prepare] builds the judges
# and the data; each experiment builds train.cpp in its own working copy,
# passes the gradient check and is scored by the trusted evaluator talking
# to two build/serve partners. Then `ratchet audit` re-scores every keep on
# the audit split from a fresh build.
source "$(dirname "$0")/lib.sh"

L=$WORK/gpt
"$RATCHET" init --template gpt "$L" >/dev/null || fail "init failed"
# A small corpus instead of Jane Austen (no apt here), and a short loop.
for i in $(seq 1 3000); do
  echo "Chapter $((i % 40)). It is a truth universally acknowledged, that a single man $((i * 7919 % 1000))."
done >"$WORK/corpus.txt"
sed -i -E \
  -e "s|^command = \"make -s trusted data\"|command = \"make -s trusted data TEXT=$WORK/corpus.txt\"|" \
  -e 's/^budget = "[^"]*"/budget = "3s"/' \
  -e 's/^max_experiments = [0-9]+/max_experiments = 2/' \
  -e 's/^baseline_repeats = [0-9]+/baseline_repeats = 1/' \
  -e 's/^confirm = [0-9]+/confirm = 0/' "$L/ratchet.toml"
grep -q "TEXT=$WORK/corpus.txt" "$L/ratchet.toml" || fail "the template's [prepare] command moved"
git -C "$L" commit -qam "a short loop"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "run failed: $out"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 2 "two experiments"
expect_eq "$(sql "$L" "SELECT status FROM experiments WHERE id = 1")" keep "the baseline is kept"
# A number of bits per byte, not a bound on quality: this corpus repeats
# itself, and on an idle machine 3 s of training reach ~0.3.
# A number of bits per byte, not a bound on quality: this corpus repeats
# itself, and on an idle machine 3 s of training reach about 0.34.
bpb=$(sql "$L" "SELECT metric FROM experiments WHERE id = 1")
awk -v v="$bpb" 'BEGIN { exit !(v > 0.01 && v < 9) }' || fail "baseline val_bpb out of range: '$bpb'"
expect_eq "$(sql "$L" "SELECT count(*) FROM runs WHERE experiment_id = 1 AND sandboxed = 1")" 1 \
  "the baseline's run was sandboxed"
expect_contains "$(sql "$L" "SELECT claims FROM runs WHERE experiment_id = 1")" "num_steps" \
  "what the run printed is kept as its claims"
[ -s "$L/.ratchet/runs/1/out/model.bin" ] || fail "no checkpoint in the run's artifacts"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE status IN ('keep', 'discard')")" 2 \
  "the search's candidate was built, checked and scored"

out=$("$RATCHET" audit "$L" 2>&1) || fail "audit failed: $out"
expect_contains "$out" "re-scored on the audit split" "keeps re-scored"
expect_contains "$out" "audit: ok" "the audit holds"
finish
