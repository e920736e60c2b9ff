#!/usr/bin/python3
"""Search-quality benchmark: ratchet's search next to Optuna's TPE sampler and
random search on the same noisy test functions (see README.md).

Every method gets the same functions, the same noise (evaluation k of seed s
draws the same noise whoever asks), the same budgets and the same seeds. The
regret at budget B is the true (noise-free) value of the point with the best
*observed* value among the first B evaluations, minus the optimum.

Usage: /usr/bin/python3 bench/search/run.py --bench build/bench/search/bench_search
           [--seeds 20] [--budgets 30,100] [--functions a,b] [--jobs 2] [--out results.json]
"""
import argparse
import concurrent.futures as futures
import json
import math
import statistics
import subprocess
import sys
import time

import optuna

from common import fmt, median, run_ratchet

optuna.logging.set_verbosity(optuna.logging.WARNING)


def run_optuna(bench, fn, seed, budget, checkpoints, sampler_name):
    """One Optuna run against `bench_search serve`; returns {checkpoint: regret}."""
    proc = subprocess.Popen([bench, "serve", fn["name"], str(seed)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask_bench(cmd, values):
        proc.stdin.write(cmd + " " + " ".join(repr(float(v)) for v in values) + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    if sampler_name == "optuna-tpe":
        sampler = optuna.samplers.TPESampler(seed=seed)
    else:
        sampler = optuna.samplers.RandomSampler(seed=seed)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    best_value, best_point, regrets = math.inf, None, {}
    start = time.time()
    for k in range(1, budget + 1):
        trial = study.ask()
        values = []
        for p in fn["params"]:
            if p["type"] == "float":
                values.append(trial.suggest_float(p["name"], p["low"], p["high"], log=p["log"]))
            elif p["type"] == "int":
                values.append(trial.suggest_int(p["name"], int(p["low"]), int(p["high"]),
                                                log=p["log"]))
            else:
                values.append(trial.suggest_categorical(p["name"], list(range(p["choices"]))))
        reply = ask_bench("eval", values)
        if reply.startswith("ok "):
            y = float(reply[3:])
            study.tell(trial, y)
            if y < best_value:
                best_value, best_point = y, values
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        if k in checkpoints:
            regrets[str(k)] = None if best_point is None else float(ask_bench("regret", best_point))
    proc.stdin.close()
    proc.wait()
    return {"function": fn["name"], "method": sampler_name, "seed": seed, "regret": regrets,
            "seconds": time.time() - start}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of the bench_search binary")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="30,100")
    ap.add_argument("--functions", default="")
    ap.add_argument("--ratchet", default="auto,random", help="ratchet algorithms to run")
    ap.add_argument("--optuna", default="optuna-tpe", help="optuna-tpe and/or optuna-random")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="", help="write every run as JSON lines here")
    args = ap.parse_args()

    budgets = [int(b) for b in args.budgets.split(",")]
    budget = max(budgets)
    fns = json.loads(subprocess.run([args.bench, "list"], check=True, capture_output=True,
                                    text=True).stdout)
    if args.functions:
        wanted = args.functions.split(",")
        fns = [f for f in fns if f["name"] in wanted]
    ratchet_methods = [m for m in args.ratchet.split(",") if m]
    optuna_methods = [m for m in args.optuna.split(",") if m]

    runs = []
    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = []
        for fn in fns:
            for m in ratchet_methods:
                jobs.append(pool.submit(run_ratchet, args.bench, fn["name"], m, args.seeds,
                                        budget, budgets))
            for m in optuna_methods:
                for seed in range(args.seeds):
                    jobs.append(pool.submit(run_optuna, args.bench, fn, seed, budget, budgets, m))
        for job in jobs:
            result = job.result()
            runs.extend(result if isinstance(result, list) else [result])
    if args.out:
        with open(args.out, "w") as f:
            for r in runs:
                f.write(json.dumps(r) + "\n")

    methods = ["ratchet-" + m for m in ratchet_methods] + optuna_methods
    def key(r):
        m = r["method"]
        return m if m.startswith("optuna") else "ratchet-" + m

    table = {}
    seconds = {}
    for r in runs:
        for b in budgets:
            table.setdefault((r["function"], key(r), b), []).append(r["regret"].get(str(b)))
        seconds.setdefault(key(r), []).append(r["seconds"])

    print(f"Median simple regret over {args.seeds} seeds (lower is better).\n")
    header = "| function | type | budget | " + " | ".join(methods) + " | ratchet-auto vs optuna-tpe |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    summary = {b: [0, 0] for b in budgets}  # no worse, better
    for fn in fns:
        for b in budgets:
            meds = {m: median(table.get((fn["name"], m, b), [None])) for m in methods}
            verdict = ""
            if "ratchet-auto" in meds and "optuna-tpe" in meds:
                a, o = meds["ratchet-auto"], meds["optuna-tpe"]
                if a < o:
                    verdict = "better"
                    summary[b][0] += 1
                    summary[b][1] += 1
                elif a == o:
                    verdict = "equal"
                    summary[b][0] += 1
                else:
                    verdict = "worse"
                ratio = "" if o in (0, math.inf) or a == math.inf else f" ({a / o:.2f}x)"
                verdict += ratio
            print(f"| {fn['name']} | {fn['kind']} | {b} | " +
                  " | ".join(fmt(meds[m]) for m in methods) + f" | {verdict} |")
    print()
    for b in budgets:
        print(f"Budget {b}: ratchet-auto no worse than optuna-tpe on {summary[b][0]} of "
              f"{len(fns)} functions, better on {summary[b][1]}.")
    print("\nMean seconds per run: " +
          ", ".join(f"{m} {statistics.mean(seconds[m]):.2f}" for m in methods if m in seconds))


if __name__ == "__main__":
    main()
