#!/usr/bin/env python3
"""A scripted stand-in for the rubric template's judge agent.

Usage: rubric_judge.py MODEL (exits 3 unless MODEL is $JUDGE_MODEL, default
"judge-model", so a test sees which model it was given). Reads judge.py's
request on stdin, takes the criteria from the answer format it asks for and
the document from its <document> block, and scores with fixed heuristics:
  clarity    3 + 2 per "For example"
  evidence   3 + 2 per "measured"
  structure  3 + 2 per "## " heading
  concision  10 - 2 per filler word (very, really, basically, actually)
each clamped to 1..10. Answers as Claude Code does with --output-format
json: the scores object is the text of "result".
"""
import json
import os
import re
import sys


def main():
    want = os.environ.get("JUDGE_MODEL", "judge-model")
    if len(sys.argv) < 2 or sys.argv[1] != want:
        print(f"rubric_judge: expected model {want}, got {sys.argv[1:]}", file=sys.stderr)
        return 3
    request = sys.stdin.read()
    doc = re.search(r"<document>\n(.*)\n</document>", request, re.S)
    names = re.findall(r'"(\w+)": <1-10>', request)
    if not doc or not names:
        print("rubric_judge: not a judge request", file=sys.stderr)
        return 4
    text = doc.group(1)
    raw = {
        "clarity": 3 + 2 * text.count("For example"),
        "evidence": 3 + 2 * text.count("measured"),
        "structure": 3 + 2 * len(re.findall(r"^## ", text, re.M)),
        "concision": 10 - 2 * len(re.findall(r"\b(very|really|basically|actually)\b", text)),
    }
    scores = {n: max(1, min(10, raw.get(n, 5))) for n in names}
    notes = {n: f"raise {n}" for n in names}
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": json.dumps({"scores": scores, "notes": notes}),
                      "total_cost_usd": 0.01}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
