#!/usr/bin/env bash
# The pruning benchmark (README.md): builds prune_replay, extracts a recorded
# loop, writes the synthetic loops and replays each with every rule.
#   bench/prune/run.sh [LOOP_DIR|LOOP.json] [REPLAY FLAGS...]
# The default is data/gpt-60s.json: the recorded 60 s GPT loop (extracted
# from its loop directory by extract.py), so the replay runs anywhere; REPLAY FLAGS (e.g. --patience 1) come
# after the defaults below, so they override them. $BUILD is the build
# folder (default build-bench next to bench/), $SEEDS the synthetic seeds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build-bench}
loop=${1:-$here/data/gpt-60s.json}
shift $(( $# > 0 ? 1 : 0 ))
seeds=${SEEDS:-1 2 3 4 5}
work=${WORK:-${TMPDIR:-/tmp}/prune-bench}
mkdir -p "$work"

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
nice ninja -C "$build" -j1 prune_replay >/dev/null
replay=$build/bench/prune/prune_replay

if [[ $loop == *.json ]]; then cp "$loop" "$work/loop.json"
else python3 "$here/extract.py" "$loop" -o "$work/loop.json"; fi
for s in $seeds; do python3 "$here/synthetic.py" --seed "$s" -o "$work/synthetic-$s.json"; done

# The issue's settings for value = loss (also PruneConfig's defaults).
settings=(--value loss --warmup 0.2 --at 0.25,0.5,0.75 --patience 2 "$@")
: >"$work/results.jsonl"
for rule in median incumbent halving; do
  for f in "$work/loop.json" "$work"/synthetic-*.json; do
    "$replay" "$f" --rule "$rule" "${settings[@]}" --json |
      python3 -c 'import json,sys; j=json.load(sys.stdin); j["file"]=sys.argv[1]; print(json.dumps(j))' \
        "$(basename "$f" .json)" >>"$work/results.jsonl"
  done
done

echo "settings: ${settings[*]}"
echo "loop: $loop; synthetic seeds: $seeds (summed); details: $work/results.jsonl"
python3 - "$work/results.jsonl" "$(basename "$loop")" <<'EOF'
import json, os, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| workload | rule | compute unpruned s | pruned s | saved | cut | keeps lost | would-be keeps cut | best candidate kept | target |")
print("|---|---|---|---|---|---|---|---|---|---|")
for rule in ("median", "incumbent", "halving"):
    for name, group in ((sys.argv[2], [r for r in rows if r["file"] == "loop"]),
                        ("synthetic", [r for r in rows if r["file"] != "loop"])):
        group = [r for r in group if r["rule"] == rule]
        if not group:
            continue
        full = sum(r["unpruned_s"] for r in group)
        spent = sum(r["pruned_s"] for r in group)
        saved = 1 - spent / full
        cut = sum(len(r["pruned"]) for r in group)
        cands = sum(r["candidates"] for r in group)
        lost = sum(len(r["keeps_lost"]) for r in group)
        keeps = sum(r["recorded_keeps"] for r in group)
        conf_lost = sum(len(r["confirmed_lost"]) for r in group)
        conf = sum(r["confirmed"] for r in group)
        best = sum(r["best_pruned"] == r["best_unpruned"] for r in group)
        # The issue's target is on the recorded loop.
        target = ("yes" if saved >= 0.30 and lost == 0 else "no") if name == sys.argv[2] else ""
        print(f"| {name} | {rule} | {full:.0f} | {spent:.0f} | {100 * saved:.1f}% | {cut} of {cands} "
              f"| {lost} of {keeps} | {conf_lost} of {conf} | {best} of {len(group)} | {target} |")
# Which synthetic keeps were lost: the slow starters are the curves that cross.
for rule in ("median", "incumbent", "halving"):
    tally = {}
    for r in rows:
        if r["file"] == "loop" or r["rule"] != rule:
            continue
        loop = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), r["file"] + ".json")))
        for e in loop["experiments"]:
            if e["status"] == "keep" and not e["baseline"]:
                t = tally.setdefault(e["kind"], [0, 0])
                t[0] += e["id"] in r["keeps_lost"]
                t[1] += 1
    if tally:
        print(f"synthetic keeps lost, {rule}: " +
              ", ".join(f"{kind} {lost} of {n}" for kind, (lost, n) in sorted(tally.items())))
EOF
