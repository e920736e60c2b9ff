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
"""
import argparse
import concurrent.futures as futures
import json
import math
import statistics
import subprocess

from common import fmt, median, run_ratchet


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
          " | ".join(f"{label(c)} vs 1" for c in others) + " |")
    print("|" + "---|" * (2 + len(configs) + len(others)))
    no_worse = {(c, b): 0 for c in others for b in budgets}
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
            print(f"| {f['name']} | {b} | " + " | ".join(fmt(meds[c]) for c in configs) +
                  " | " + " | ".join(verdicts) + " |")
    print()
    for c in others:
        for b in budgets:
            print(f"Budget {b}: {label(c)} no worse than 1 worker on {no_worse[(c, b)]} of "
                  f"{len(fns)} functions.")
    secs = {c: statistics.mean(r["seconds"] for f in fns for r in runs[(f["name"], c)])
            for c in configs}
    print("\nMean seconds per run: " + ", ".join(f"{label(c)} {secs[c]:.2f}" for c in configs))


if __name__ == "__main__":
    main()
