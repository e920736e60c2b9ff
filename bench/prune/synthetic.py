#!/usr/bin/env python3
"""Writes a synthetic loop with known curves as the JSON prune_replay reads.

    synthetic.py [-o OUT.json] [--seed N] [--candidates N]

The loss of a run at x = t / budget is

    final + b * (exp(-k x) - exp(-k)) + run offset + point noise

so it ends at the candidate's own final value. Most candidates learn fast
(k = 4); "slow" ones (k = 2) trail by about 0.35 at half the budget and
finish lower than most: the crossing curves an early stop gets wrong. "bad"
ones finish far behind; two crash (NaN loss, then the run ends). The
baseline runs three times (main and two repeats), which measures the noise.
A candidate is kept when its measured final value beats the incumbent's by
more than 2 run-to-run standard deviations, as ratchet's accept would with
a known noise; there are no confirm runs.
"""
import argparse
import json
import math
import random
import sys

BUDGET = 60.0
STEP = 5.0                  # a progress line every 5 s, like train.cpp at 60 s
RUN_SD, POINT_SD = 0.010, 0.005
NOISE_SD = math.hypot(RUN_SD, POINT_SD)  # of a run's final value
BASELINE = dict(final=1.0, b=3.0, k=4.0)


def run(rng, final, b, k, crash_at=None):
    """One run: its curve, measured final value (None if it crashed) and wall seconds."""
    offset = rng.gauss(0, RUN_SD)
    points, t = [], 0.0
    while t < BUDGET:
        x = t / BUDGET
        if crash_at is not None and x > crash_at + 0.1:
            break  # the process died; no more lines
        loss = final + b * (math.exp(-k * x) - math.exp(-k)) + offset + rng.gauss(0, POINT_SD)
        if crash_at is not None and x > crash_at:
            loss = None  # printed as nan
        stamp = round(t + rng.uniform(0, 0.4), 2)
        points.append({"t": stamp, "values": {"elapsed": stamp, "loss": loss}})
        t += STEP
    if crash_at is not None:
        return points, None, round(points[-1]["t"] + 1.0, 2)
    measured = final + offset + rng.gauss(0, POINT_SD)
    return points, measured, round(BUDGET + 1.0 + rng.uniform(0, 0.5), 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="-")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--candidates", type=int, default=40)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    experiments = []
    base_runs, base_values = [], []
    for i in range(3):
        curve, value, wall = run(rng, **BASELINE)
        base_runs.append({"purpose": "main" if i == 0 else "baseline_repeat",
                          "wall_s": wall, "curve": curve, "metric": value})
        base_values.append(value)
    incumbent = sum(base_values) / len(base_values)
    experiments.append({"id": 1, "baseline": True, "status": "keep", "kind": "baseline",
                        "metric": incumbent, "runs": base_runs})

    crashes = set(rng.sample(range(args.candidates), 2))
    for i in range(args.candidates):
        u = rng.random()
        drift = 0.12 * i / max(1, args.candidates - 1)  # the search finds better regions
        if i in crashes:
            kind, final, b, k = "crash", BASELINE["final"], 3.0, 4.0
        elif u < 0.2:
            kind, final, b, k = "slow", rng.gauss(0.98 - drift, 0.03), rng.uniform(2.8, 3.4), 2.0
        elif u < 0.35:
            kind, final, b, k = "bad", 1.0 + rng.uniform(0.3, 1.0), rng.uniform(2.5, 3.5), 4.0
        else:
            kind, final, b, k = "fast", rng.gauss(1.03 - drift, 0.04), rng.uniform(2.5, 3.5), 4.0
        curve, value, wall = run(rng, final, b, k,
                                 crash_at=rng.uniform(0.3, 0.6) if kind == "crash" else None)
        if value is None:
            status = "crash"
        elif value < incumbent - 2 * NOISE_SD:
            status, incumbent = "keep", value
        else:
            status = "discard"
        experiments.append({"id": i + 2, "baseline": False, "status": status, "kind": kind,
                            "final": round(final, 4), "metric": value,
                            "runs": [{"purpose": "main", "wall_s": wall, "curve": curve,
                                      "metric": value}]})

    out = {"source": f"synthetic.py --seed {args.seed} --candidates {args.candidates}",
           "budget_s": BUDGET, "metric": "final_loss", "goal": "min",
           "noise_sd": NOISE_SD, "experiments": experiments}
    text = json.dumps(out, indent=1) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
