#!/usr/bin/env bash
# The autoresearch template, adopted as its README says into a checkout that
# looks like Karpathy's autoresearch, and run with its ratchet.toml unchanged
# but for a [sandbox] table that shows the stand-ins' folder in the sandbox.
# `uv` and `claude` are stand-ins first in PATH: `uv run train.py` runs a fake
# train.py that prints autoresearch's summary; `claude` checks the flags the
# template passes, edits train.py and prints Claude Code's JSON report.
source "$(dirname "$0")/lib.sh"

BIN=$WORK/bin
mkdir -p "$BIN"
cat >"$BIN/uv" <<'SH'
#!/bin/sh
# uv run FILE: the fake train.py is a shell script.
[ "$1" = run ] || { echo "uv stand-in: only 'uv run' is known" >&2; exit 2; }
shift
exec sh "$@"
SH
cat >"$BIN/claude" <<'SH'
#!/bin/sh
# Claude Code stand-in: headless, streamed JSON, edits allowed, no shell, no
# session kept, a budget; a short retry setting, and a scratch home.
args="$*"
for want in "-p" "--output-format stream-json" "--verbose" "--include-partial-messages" "--model sonnet" \
    "--permission-mode acceptEdits" "--disallowedTools Bash" "--no-session-persistence" "--max-budget-usd 2"; do
  case " $args " in *" $want "*) ;; *) echo "claude stand-in: missing $want in: $args" >&2; exit 2 ;; esac
done
[ "$CLAUDE_CODE_MAX_RETRIES" = 6 ] || { echo "claude stand-in: CLAUDE_CODE_MAX_RETRIES=$CLAUDE_CODE_MAX_RETRIES" >&2; exit 2; }
# In ratchet's sandbox the scratch home is shown at /home/sandbox.
case "$HOME" in /home/sandbox) ;; *) echo "claude stand-in: HOME is $HOME, not the sandbox's scratch home" >&2; exit 2 ;; esac
[ -z "$(ls -A "$HOME")" ] || { echo "claude stand-in: the scratch home is not empty" >&2; exit 2; }
prompt=$(cat)
case "$prompt" in *"# autoresearch under ratchet"*) ;; *) echo "claude stand-in: program.md not in the prompt" >&2; exit 2 ;; esac
lr=$(sed -n 's/^LR=//p' train.py)
new=$((lr + 1))
sed -i "s/^LR=.*/LR=$new/" train.py
printf '{"type":"result","subtype":"success","is_error":false,"result":"DESCRIPTION: raise LR from %s to %s","total_cost_usd":0.5,"usage":{"input_tokens":9000,"output_tokens":300}}\n' "$lr" "$new"
SH
chmod +x "$BIN/uv" "$BIN/claude"
export PATH="$BIN:$PATH"

# A checkout shaped like autoresearch, with its own program.md.
A=$WORK/autoresearch
mkdir -p "$A"
cat >"$A/train.py" <<'SH'
LR=3
echo "step 00010 | loss 3.1"
echo "---"
awk -v lr="$LR" 'BEGIN { printf "val_bpb:          %.6f\n", 1 + (lr - 6) * (lr - 6) / 100 }'
echo "training_seconds: 300.1"
echo "peak_vram_mb:     45060.2"
echo "num_steps:        953"
SH
echo "# data, tokenizer, evaluate_bpb" >"$A/prepare.py"
echo "[project]" >"$A/pyproject.toml"
echo "# autoresearch: the agent runs the loop itself. NEVER STOP." >"$A/program.md"
git_init "$A"

# Adopt the template, as its README says: one commit on the clean checkout.
before=$(git -C "$A" rev-parse HEAD)
"$RATCHET" init --template autoresearch "$A" >/dev/null || fail "ratchet init on the checkout failed"
expect_eq "$(git -C "$A" rev-parse HEAD~1)" "$before" "init adds one commit"
expect_eq "$(git -C "$A" status --porcelain)" "" "init leaves the tree clean"
expect_eq "$(git -C "$A" show --name-only --format= HEAD | sort | tr '\n' ' ')" ".gitignore program.md ratchet.toml " "init commits the template files"
expect_contains "$(cat "$A/program.md")" "ratchet" "the template's program.md replaces the original"
[ ! -e "$A/README.md" ] || fail "the template's README was copied"

prompt=$("$RATCHET" prompt "$A" 2>/dev/null) || fail "ratchet prompt failed"
expect_contains "$prompt" "Edit only these files: \`train.py\`" "prompt: editable"
expect_contains "$prompt" "\`prepare.py\`" "prompt: protected"
expect_contains "$prompt" "Do not run the experiment (\`uv run train.py\`)" "prompt: run command"

# The stand-ins are outside the system folders: the sandbox must be told.
printf '\n[sandbox]\nreadable = ["%s"]\n' "$BIN" >>"$A/ratchet.toml"
git -C "$A" commit -qam "ratchet: show the stand-ins in the sandbox"

out=$("$RATCHET" run "$A" --max-experiments 3 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
expect_eq "$(sql "$A" "SELECT group_concat(status, ' ') FROM (SELECT status FROM experiments ORDER BY id)")" \
  "keep keep keep" "statuses"
expect_eq "$(sql "$A" "SELECT description FROM experiments WHERE id=3")" "raise LR from 4 to 5" "description"
expect_eq "$(sql "$A" "SELECT printf('%.2f', metric) || ' ' || json_extract(metrics, '$.peak_vram_mb') FROM experiments WHERE id=3")" \
  "1.01 45060.2" "val_bpb and peak_vram_mb"
expect_eq "$(git -C "$A" rev-parse --abbrev-ref HEAD)" "ratchet/autoresearch" "branch"
expect_eq "$(sed -n 's/^LR=//p' "$A/train.py")" "5" "train.py at the incumbent"
"$RATCHET" export "$A" --tsv "$WORK/results.tsv" || fail "export failed"
expect_eq "$(head -1 "$WORK/results.tsv" | cut -f1-5)" "$(printf 'commit\tval_bpb\tmemory_gb\tstatus\tdescription')" "results.tsv columns"
expect_eq "$(sql "$A" "SELECT printf('%.1f', sum(json_extract(usage, '$.cost_usd'))) FROM experiments")" "1.0" "agent cost recorded"
finish
