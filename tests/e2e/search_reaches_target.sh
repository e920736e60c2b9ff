#!/usr/bin/env bash
# The built-in search proposer end to end: a C++ toy whose score is a known
# function of three constants in toy.cpp (minimum 0 at LR=0.01, WIDTH=48,
# MOMENTUM=0.9). `ratchet run` with propose.kind = "search" stops after 8
# experiments, resumes from the ledger and reaches stop.target; every
# proposal is new, inside the space and its constraint, and only the three
# literals of toy.cpp ever change.
here=$(dirname "$0")
source "$here/lib.sh"

L=$WORK/loop
mkdir -p "$L"
cat >"$L/ratchet.toml" <<'TOML'
[edit]
files = ["toy.cpp"]
protected = ["ratchet.toml"]
[run]
build = "c++ -O0 -o toy toy.cpp"
command = "./toy"
budget = "10s"
timeout = "30s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 45
target = 0.05
[propose]
kind = "search"
[propose.search]
seed = 1
constraints = ["WIDTH <= 96 || LR < 0.1"]
[[propose.search.param]]
name = "LR"
type = "float"
low = 0.0001
high = 1.0
log = true
[[propose.search.param]]
name = "WIDTH"
type = "int"
low = 8
high = 128
step = 8
[[propose.search.param]]
name = "MOMENTUM"
type = "float"
low = 0.0
high = 0.99
TOML
cat >"$L/toy.cpp" <<'CPP'
// A toy workload: the score is a known function of three constants.
#include <cmath>
#include <cstdio>

constexpr double LR = 0.3;  // learning rate; "LR = 1" in a string is not it
static const int WIDTH = 112;
const double MOMENTUM = 0.2;  /* MOMENTUM = 0.5 in a comment */

int main() {
  const double a = std::log10(LR) + 2, b = (WIDTH - 48) / 32.0, c = (MOMENTUM - 0.9) * 2;
  std::printf("---\nscore: %.6f\n", a * a + b * b + c * c);
  return 0;
}
CPP
git_init "$L"
printf 'toy\n' >>"$L/.gitignore"
git -C "$L" commit -qam "ignore the toy binary"

out=$("$RATCHET" run "$L" --max-experiments 8 2>&1) || stopped_by_rule || fail "first run failed: $out"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" "8" "experiments after the first run"

out=$("$RATCHET" run "$L" 2>&1) || stopped_by_rule || fail "resumed run failed: $out"
expect_contains "$out" "reached stop.target" "stop reason"

# Every candidate came from the search, with its parameters.
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE baseline=0 AND (proposer!='search' OR params='')")" \
  "0" "candidates without search parameters"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE status='crash'")" "0" "crashes"
# Never the same point twice.
expect_eq "$(sql "$L" "SELECT count(*) - count(DISTINCT params) FROM experiments WHERE baseline=0")" \
  "0" "repeated points"
# Inside the space and the constraint.
bad=$(sql "$L" "SELECT id FROM experiments WHERE baseline=0 AND NOT (
  json_extract(params,'$.LR') BETWEEN 0.0001 AND 1.0 AND
  json_extract(params,'$.WIDTH') BETWEEN 8 AND 128 AND json_extract(params,'$.WIDTH') % 8 = 0 AND
  json_extract(params,'$.MOMENTUM') BETWEEN 0.0 AND 0.99 AND
  (json_extract(params,'$.WIDTH') <= 96 OR json_extract(params,'$.LR') < 0.1))")
expect_eq "$bad" "" "proposals outside the space"
best=$(sql "$L" "SELECT min(metric) FROM experiments")
expect_eq "$(awk -v b="$best" 'BEGIN { print (b <= 0.05) ? "yes" : "no" }')" "yes" "best score $best"

# Only the three literals changed; comments and strings on their lines are intact.
start=$(sql "$L" "SELECT value FROM meta WHERE key='start_commit'")
changed=$(git -C "$L" diff -U0 "$start" HEAD -- toy.cpp | grep '^[-+][^-+]' | sed 's/= [-0-9.e]*/= V/' | sort -u)
expect_eq "$changed" "$(printf '%s\n' \
  '+const double MOMENTUM = V;  /* MOMENTUM = 0.5 in a comment */' \
  '+constexpr double LR = V;  // learning rate; "LR = 1" in a string is not it' \
  '+static const int WIDTH = V;' \
  '-const double MOMENTUM = V;  /* MOMENTUM = 0.5 in a comment */' \
  '-constexpr double LR = V;  // learning rate; "LR = 1" in a string is not it' \
  '-static const int WIDTH = V;' | sort -u)" "lines changed in toy.cpp"
finish
