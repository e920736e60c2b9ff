"""What the Python stand-in agents share (fixer.py, pipeline_fixer.py,
rubric_writer.py): the prompt read as `claude -p` reads it, the step of
this experiment's plan, and a Claude Code style JSON report."""
import json
import os
import sys


def read_prompt():
    """The prompt from stdin, saved as $AGENT_LOG_DIR/prompt-<n>.md when set."""
    prompt = sys.stdin.read()
    log_dir = os.environ.get("AGENT_LOG_DIR")
    if log_dir:
        n = os.environ.get("RATCHET_EXPERIMENT", "0")
        with open(os.path.join(log_dir, f"prompt-{n}.md"), "w") as f:
            f.write(prompt)
    return prompt


def plan_step(variable, default="nothing"):
    """This experiment's entry in $variable ("2:fix 3:cheat ..."), or default."""
    n = os.environ.get("RATCHET_EXPERIMENT", "0")
    plan = dict(e.split(":", 1) for e in os.environ.get(variable, "").split() if ":" in e)
    return plan.get(n, default)


def report(description, cost=0.05):
    """What Claude Code prints with --output-format json."""
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": "DESCRIPTION: " + description, "total_cost_usd": cost,
                      "usage": {"input_tokens": 2000, "output_tokens": 100}}))
