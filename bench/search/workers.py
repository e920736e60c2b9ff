#!/usr/bin/python3
"""The cost of proposing without the latest results: ratchet's search with 4
workers (4 points in flight, each asked with the others pending, the oldest
told first) next to 1 worker, at equal numbers of evaluations, on the search
benchmark's functions, seeds and noise (see README.md).

Usage: /usr/bin/python3 bench/search/workers.py --bench build/bench/search/bench_search
           [--seeds 20] [--budgets 30,100] [--workers 1,4] [--liars worst,believer]
           [--method auto] [--jobs 2]
With several --liars, each is a column of its own (the value a pending point
enters the Gaussian process with; see src/propose/search/optimizer.h).

Besides the medians, each comparison is paired by seed (the same seed gives
both the same noise and initial design): how many seeds the N-worker search
ends worse and better, and the one-sided sign test's p-value that it is
worse more often than not (ties dropped). A comparison is "worse beyond
chance" when that p is below 0.05.
"""
import argparse
import concurrent.futures as futures
import json
import math
import statistics
import subprocess

from common import fmt, median, run_ratchet


def sign_test_worse(pairs):
    """(seeds worse, seeds better, one-sided p that worse is the more likely)."""
    worse = sum(1 for a, o in pairs if a > o)
    better = sum(1 for a, o in pairs if a < o)
    n = worse + better
    p = sum(math.comb(n, k) for k in range(worse, n + 1)) / 2 ** n if n else 1.0
    return worse, better, p


def regret(record, budget):
    v = record["regret"].get(str(budget))
    return math.inf if v is None else v


def run(bench, fn, method, workers, liar, seeds, budgets):
    extra = ["--workers", str(workers)] + (["--liar", liar] if liar else [])
    return run_ratchet(bench, fn, method, seeds, max(budgets), budgets, extra)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of the bench_search binary")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="30,100")
    ap.add_argument("--workers", default="1,4", help="the first is the reference")
    ap.add_argument("--liars", default="", help="e.g. worst,believer; empty: the default")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--functions", default="")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    counts = [int(w) for w in args.workers.split(",")]
    fns = json.loads(subprocess.run([args.bench, "list"], check=True, capture_output=True,
                                    text=True).stdout)
    if args.functions:
        fns = [f for f in fns if f["name"] in args.functions.split(",")]

    liars = [l for l in args.liars.split(",") if l] or [""]
    # The reference (no point is ever pending with one worker), then every
    # other worker count with every liar.
    configs = [(counts[0], "")] + [(w, l) for w in counts[1:] for l in liars]

    def label(c):
        w, l = c
        return f"{w} worker{'s' if w > 1 else ''}" + (f" ({l})" if l else "")

    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = {(f["name"], c): pool.submit(run, args.bench, f["name"], args.method, c[0], c[1],
                                            args.seeds, budgets)
                for f in fns for c in configs}
        runs = {k: j.result() for k, j in jobs.items()}

    ref, others = configs[0], configs[1:]
    print(f"Median simple regret of ratchet-{args.method} over {args.seeds} seeds "
          f"(lower is better).\n")
    print("| function | budget | " + " | ".join(label(c) for c in configs) + " | " +
          " | ".join(f"{label(c)} vs 1" for c in others) + " | " +
          " | ".join(f"{label(c)}: seeds worse/better, p" for c in others) + " |")
    print("|" + "---|" * (2 + len(configs) + 2 * len(others)))
    no_worse = {(c, b): 0 for c in others for b in budgets}
    not_beyond_chance = {(c, b): 0 for c in others for b in budgets}
    for f in fns:
        for b in budgets:
            meds = {c: median([r["regret"].get(str(b)) for r in runs[(f["name"], c)]])
                    for c in configs}
            verdicts = []
            for c in others:
                a, o = meds[c], meds[ref]
                word = "better" if a < o else "equal" if a == o else "worse"
                if a <= o:
                    no_worse[(c, b)] += 1
                if o not in (0, math.inf) and a != math.inf:
                    word += f" ({a / o:.2f}x)"
                verdicts.append(word)
            paired = []
            for c in others:
                by_seed = {r["seed"]: regret(r, b) for r in runs[(f["name"], ref)]}
                pairs = [(regret(r, b), by_seed[r["seed"]]) for r in runs[(f["name"], c)]
                         if r["seed"] in by_seed]
                worse, better, p = sign_test_worse(pairs)
                if p >= 0.05:
                    not_beyond_chance[(c, b)] += 1
                paired.append(f"{worse}/{better}, {p:.2g}")
            print(f"| {f['name']} | {b} | " + " | ".join(fmt(meds[c]) for c in configs) +
                  " | " + " | ".join(verdicts) + " | " + " | ".join(paired) + " |")
    print()
    for c in others:
        for b in budgets:
            print(f"Budget {b}: {label(c)} no worse than 1 worker on {no_worse[(c, b)]} of "
                  f"{len(fns)} functions by the median; not worse beyond chance (sign test, "
                  f"p >= 0.05) on {not_beyond_chance[(c, b)]} of {len(fns)}.")
    secs = {c: statistics.mean(r["seconds"] for f in fns for r in runs[(f["name"], c)])
            for c in configs}
    print("\nMean seconds per run: " + ", ".join(f"{label(c)} {secs[c]:.2f}" for c in configs))


if __name__ == "__main__":
    main()
