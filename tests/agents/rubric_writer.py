#!/usr/bin/env python3
"""A scripted stand-in for the rubric template's writer agent.

Usage: rubric_writer.py MODEL. Reads the prompt on stdin (saved as
$AGENT_LOG_DIR/prompt-<n>.md when set), finds the best version's
`criterion.<name> = N` scores in it, and does what program.md asks: improve
the weakest criterion (all of them when tied), with an edit the stand-in
judge (rubric_judge.py) rewards. With "strongest" for this experiment in
$WRITER_PLAN ("4:strongest") it improves the strongest one instead, which
cannot raise the minimum. Prints a Claude Code style JSON report.
"""
import os
import re
import sys

from standin_common import plan_step, read_prompt, report

EDITS = {
    "clarity": lambda d, k: d.rstrip("\n") + f"\n\nFor example, case {k}: a change to one file rebuilds one target.\n",
    "evidence": lambda d, k: d.rstrip("\n") + f"\n\nWe measured run {k} on the CI runners, before and after the cache.\n",
    "structure": lambda d, k: d.rstrip("\n") + f"\n\n## Part {k}\n\nWhat this part covers.\n",
    "concision": lambda d, k: re.sub(r"\b(very|really|basically|actually) ", "", d, count=1),
}


def main():
    n = os.environ.get("RATCHET_EXPERIMENT", "0")
    prompt = read_prompt()
    best = re.search(r"^- Best so far: .*$", prompt, re.M)
    scores = {m.group(1): float(m.group(2))
              for m in re.finditer(r"criterion\.(\w+) = ([0-9.]+)", best.group(0) if best else "")}
    if not scores:
        sys.exit("rubric_writer: no criterion scores in the prompt")
    if plan_step("WRITER_PLAN", "weakest") == "strongest":
        top = max(scores.values())
        chosen = [c for c in sorted(scores) if scores[c] == top][:1]
    else:
        low = min(scores.values())
        chosen = [c for c in sorted(scores) if scores[c] == low]
    with open("doc.md") as f:
        doc = f.read()
    for c in chosen:
        doc = EDITS[c](doc, n)
    with open("doc.md", "w") as f:
        f.write(doc)
    report("improve " + " and ".join(chosen), cost=0.02)


if __name__ == "__main__":
    main()
