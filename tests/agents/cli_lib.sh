# Shared by the scenarios that run the real agent CLIs (tests/e2e/agent_cli_*.sh),
# sourced after tests/e2e/lib.sh: the pinned CLIs from tests/agents/setup
# first in PATH, the fake model server of tests/agents/fake_model on
# 127.0.0.1, and questions about what it received.

FAKE_MODEL=$RATCHET_HOME/tests/agents/fake_model
setup_out=$("$RATCHET_HOME/tests/agents/setup") || {
  code=$?
  if [ "$code" -eq 77 ]; then
    echo "SKIP [$SCENARIO]: the agent CLIs cannot be installed here (tests/agents/setup said why)"
    exit 77
  fi
  echo "FAIL [$SCENARIO]: tests/agents/setup failed" >&2
  exit 1
}
export PATH="$setup_out:$PATH"
# The CLIs' install folder (node_modules/.bin is links into it): ratchet's
# sandbox shows only the system folders unless told.
CLI_DIR=$(cd "$setup_out/../.." && pwd)

SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  SERVER_PID=
}
trap 'stop_server; cleanup' EXIT

# start_server PLAN_FILE [LOG_NAME]: starts the fake model server on a free
# port of 127.0.0.1; sets PORT and SERVER_LOG ($WORK/LOG_NAME.jsonl, default
# requests). The plan may be rewritten later.
start_server() {
  stop_server
  SERVER_LOG=$WORK/${2:-requests}.jsonl
  rm -f "$WORK/port"
  # Not in ratchet's environment: the mark below finds what outlived a run.
  env -u AGENT_MARK node "$FAKE_MODEL/server.mjs" --script "$1" --log "$SERVER_LOG" \
    --port-file "$WORK/port" >"$WORK/server.out" 2>&1 &
  SERVER_PID=$!
  wait_until 20 test -s "$WORK/port" || { fail "the fake model server did not start: $(cat "$WORK/server.out")"; finish; }
  PORT=$(cat "$WORK/port")
}

# report ARGS...: node report.mjs on the server's log (see report.mjs).
report() { node "$FAKE_MODEL/report.mjs" "$SERVER_LOG" "$@"; }

# Every process that ratchet starts inherits AGENT_MARK: one still alive
# after `ratchet run` returned outlived its run.
export AGENT_MARK="ratchet-e2e-$SCENARIO-$$"
survivors() {
  local pids="" f
  for f in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "AGENT_MARK=$AGENT_MARK"; then
      pids="$pids ${f#/proc/}"
    fi
  done
  echo "${pids//\/environ/}"
}

# ledger_usage DIR ID: "INPUT OUTPUT COST" as the ledger has them (cost to 6 places).
ledger_usage() {
  sql "$1" "SELECT json_extract(usage, '\$.input_tokens') || ' ' || json_extract(usage, '\$.output_tokens') || ' ' || printf('%.6f', json_extract(usage, '\$.cost_usd')) FROM experiments WHERE id=$2"
}

# toy_loop DIR AGENT-TABLE [STOP-LINES]: a loop whose score is (x - 3)^2 for
# the number in x.txt (100 at first), with the agent as its proposer, run in
# ratchet's sandbox with the CLIs' folder readable (the agent's network is
# on by default: it reaches the fake model server).
toy_loop() {
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[edit]
files = ["x.txt"]
protected = ["score.sh", "ratchet.toml", "program.md"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 30
consecutive_failures = 20
${3:-}
[sandbox]
readable = ["$CLI_DIR"]
[propose]
kind = "agent"
[propose.agent]
$2
TOML
  echo 100 >"$1/x.txt"
  printf 'x=$(cat x.txt)\necho "---"\necho "score: $(( (x - 3) * (x - 3) ))"\n' >"$1/score.sh"
  printf '# Toy\nLower the score: make the number in x.txt nearer 3, one step at a time.\n' >"$1/program.md"
  git_init "$1"
}

# template_command claude|codex: the agent's command line exactly as
# templates/autoresearch/ratchet.toml writes it (uncommented).
template_command() {
  awk -v cli="$1" '
    { line = $0; sub(/^# /, "", line) }
    !on && index(line, "command = [\"" cli "\"") == 1 { on = 1 }
    on { print line; if (line ~ /\]$/) exit }
  ' "$RATCHET_HOME/templates/autoresearch/ratchet.toml"
}

# template_key CLI KEY: the KEY = ... line that follows the CLI's command in
# templates/autoresearch/ratchet.toml (uncommented).
template_key() {
  awk -v cli="$1" -v key="$2" '
    { line = $0; sub(/^# /, "", line) }
    !on && index(line, "command = [\"" cli "\"") == 1 { on = 1 }
    on && index(line, key " = ") == 1 { print line; exit }
    on && line == "" { exit }
  ' "$RATCHET_HOME/templates/autoresearch/ratchet.toml"
}
