"""What run.py and workers.py share: ratchet's algorithms run by bench_search,
and the medians and figures of the tables."""
import json
import math
import statistics
import subprocess


def run_ratchet(bench, fn_name, method, seeds, budget, checkpoints, extra=()):
    """`bench_search run` for one function and algorithm: a dict per seed."""
    out = subprocess.run([bench, "run", "--functions", fn_name, "--methods", method,
                          "--seeds", str(seeds), "--budget", str(budget),
                          "--checkpoints", ",".join(map(str, checkpoints))] + list(extra),
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def median(values):
    """The median regret; a run that found no point (None) counts as inf."""
    return statistics.median([math.inf if v is None else v for v in values])


def fmt(v):
    if v == math.inf:
        return "inf"
    if v == 0:
        return "0"
    return f"{v:.3g}"
