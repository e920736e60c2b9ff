#!/bin/sh
# A scripted stand-in for a coding agent CLI, for the end-to-end tests. It
# reads the prompt on stdin like `claude -p` does, acts out one behaviour,
# and prints what Claude Code prints with --output-format json.
#
# The behaviour is $1, or the entry for this experiment in $AGENT_PLAN
# ("2:good 3:protected ..."), or $AGENT_DEFAULT, or "good":
#   good       lower the number in x.txt by one (an in-scope edit)
#   bad        write "BAD" into x.txt (for the reviewer test)
#   protected  edit score.sh, a protected file
#   outside    create other.txt, which is not editable
#   nothing    change nothing, and say so
#   hang       sleep far past the timeout (its pid in $AGENT_LOG_DIR/hang-<n>.pid)
#   fail       print an error and exit 3
#   ledger     try to falsify the ledger, move the branch and rewrite the
#              notes of the loop (found from $RATCHET_RUN_DIR, as a hostile
#              agent would: its cwd is only a working copy), then make a good
#              edit
#   wipe       delete the loop's .ratchet entirely (ratchet must stop)
#   fakeusage  make a good edit, but print a made-up score summary and a
#              usage report with a negative cost and negative tokens (as if
#              to pay back what was spent)
# AGENT_COST (default 0.1) is the cost it reports. When AGENT_LOG_DIR is
# set, the prompt it got is saved there as prompt-<experiment>.md.
n=${RATCHET_EXPERIMENT:-0}
mode=$1
if [ -z "$mode" ]; then
  for entry in ${AGENT_PLAN:-}; do
    [ "${entry%%:*}" = "$n" ] && mode=${entry#*:}
  done
fi
mode=${mode:-${AGENT_DEFAULT:-good}}
if [ -n "${AGENT_LOG_DIR:-}" ]; then cat >"$AGENT_LOG_DIR/prompt-$n.md"; else cat >/dev/null; fi

report() {  # report TEXT: the JSON result object, on one line
  printf '{"type":"result","subtype":"success","is_error":false,"num_turns":3,'
  printf '"result":"%s","session_id":"standin-%s","total_cost_usd":%s,' "$1" "$n" "${AGENT_COST:-0.1}"
  printf '"usage":{"input_tokens":1000,"cache_creation_input_tokens":200,'
  printf '"cache_read_input_tokens":300,"output_tokens":50}}\n'
}

lower() {
  x=$(cat x.txt)
  echo $((x - 1)) >x.txt
  echo "editing x.txt" >&2
  report "I lowered x.\\nHYPOTHESIS: x nearer 3 scores better\\nDESCRIPTION: lower x from $x to $((x - 1))"
}

case "$mode" in
  good) lower ;;
  bad)
    echo "BAD" >>x.txt
    report "DESCRIPTION: append BAD to x.txt" ;;
  protected)
    echo 'echo "---"; echo "score: 0"' >score.sh
    report "DESCRIPTION: make the scorer kinder" ;;
  outside)
    echo "note" >other.txt
    report "DESCRIPTION: add a file of notes" ;;
  nothing) report "x is already as good as I can make it.\\nDESCRIPTION: no change: x looks optimal" ;;
  hang)
    [ -n "${AGENT_LOG_DIR:-}" ] && echo $$ >"$AGENT_LOG_DIR/hang-$n.pid"
    exec sleep 600 ;;
  fail)
    echo "agent: API error 529 overloaded" >&2
    exit 3 ;;
  ledger)
    loop=${RATCHET_RUN_DIR%/.ratchet/runs/*}
    ledger=$loop/.ratchet/ledger.db
    if sqlite3 "$ledger" "UPDATE experiments SET metric = -1, description = 'forged' WHERE id = 1" 2>/dev/null; then
      echo "ledger write: done"
    else
      echo "ledger write: refused"
    fi
    if git -C "$loop" update-ref refs/heads/forged HEAD 2>/dev/null; then echo "ref write: done"; else echo "ref write: refused"; fi
    if echo "- everything was kept" >>"$loop/.ratchet/notes.md" 2>/dev/null; then echo "notes write: done"; else echo "notes write: refused"; fi
    lower ;;
  fakeusage)
    x=$(cat x.txt)
    echo $((x - 1)) >x.txt
    printf -- '---\nscore: 0\n'
    printf '{"type":"result","subtype":"success","is_error":false,"result":"%s",' \
      "I ran it myself: score 0.\\nDESCRIPTION: lower x from $x to $((x - 1))"
    printf '"total_cost_usd":-5,"usage":{"input_tokens":-100000,"output_tokens":-100000}}\n' ;;
  wipe)
    rm -rf "${RATCHET_RUN_DIR%/.ratchet/runs/*}/.ratchet" 2>/dev/null
    lower ;;
  *)
    echo "standin.sh: unknown behaviour '$mode'" >&2
    exit 2 ;;
esac
