#!/usr/bin/env python3
"""Writes a recorded loop as the JSON prune_replay reads (README.md).

    extract.py LOOP_DIR [-o OUT.json] [--budget SECONDS]

Statuses, metrics and runs come from LOOP_DIR/.ratchet/ledger.db, opened
read-only (the loop may still be running); each run's curve comes from its
log's progress lines, with t = the line's `elapsed=` (the ledger of a loop
recorded before curves were stored has none). Only experiments that are
decided are written, in id order.
"""
import argparse
import json
import math
import os
import re
import sqlite3
import sys
import tomllib


def duration(text):
    """'60s', '5m', '1h' or a number of seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = re.fullmatch(r"\s*([0-9.]+)\s*(s|m|h)?\s*", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def number(text):
    """A progress value as ParseProgressLine reads it ('41%' is 41); None if not a number."""
    try:
        return float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        return None


def curve(path):
    points = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("progress:"):
                    continue
                values = {}
                for word in line[len("progress:"):].split():
                    key, eq, text = word.partition("=")
                    v = number(text) if key and eq and text else None
                    if v is not None:
                        # JSON has no NaN: a NaN loss is written as null.
                        values[key] = v if math.isfinite(v) else None
                if "elapsed" in values and values["elapsed"] is not None:
                    points.append({"t": values["elapsed"], "values": values})
    except FileNotFoundError:
        pass
    return points


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("loop_dir")
    ap.add_argument("-o", "--out", default="-")
    ap.add_argument("--budget", type=float, help="seconds; default: [run] budget of ratchet.toml")
    args = ap.parse_args()

    loop = os.path.abspath(args.loop_dir)
    with open(os.path.join(loop, "ratchet.toml"), "rb") as f:
        toml = tomllib.load(f)
    budget = args.budget or duration(toml.get("run", {}).get("budget", 0))
    if budget <= 0:
        sys.exit("no [run] budget in ratchet.toml: pass --budget")

    db = sqlite3.connect(f"file:{os.path.join(loop, '.ratchet', 'ledger.db')}?mode=ro", uri=True)
    runs = {}
    for exp_id, attempt, purpose, wall_s, timed_out, metric, log_path in db.execute(
            "SELECT experiment_id, attempt, purpose, wall_s, timed_out, metric, log_path"
            " FROM runs ORDER BY experiment_id, attempt"):
        runs.setdefault(exp_id, []).append({
            "attempt": attempt, "purpose": purpose, "wall_s": wall_s,
            "timed_out": bool(timed_out), "metric": metric,
            "curve": curve(os.path.join(loop, log_path)) if log_path else []})
    experiments = []
    for exp_id, status, baseline, metric in db.execute(
            "SELECT id, status, baseline, metric FROM experiments"
            " WHERE status != '' ORDER BY id"):
        experiments.append({"id": exp_id, "baseline": bool(baseline), "status": status,
                            "metric": metric, "runs": runs.get(exp_id, [])})

    out = {"source": loop, "budget_s": budget,
           "metric": toml.get("metric", {}).get("name", ""),
           "goal": toml.get("metric", {}).get("goal", "min"),
           "experiments": experiments}
    text = json.dumps(out, indent=1) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
