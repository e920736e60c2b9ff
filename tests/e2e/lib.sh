# Shared helpers for the end-to-end scenarios. Each scenario script sources
# this file, builds loop directories under a fresh temporary folder, runs the
# real binary ($RATCHET) and asserts on what it did.
set -euo pipefail

: "${RATCHET:?set RATCHET to the ratchet binary}"
SCENARIO=$(basename "$0" .sh)
TMP_ROOT=${RATCHET_TEST_TMP:-/tmp/ratchet-e2e}
mkdir -p "$TMP_ROOT"
WORK=$(mktemp -d "$TMP_ROOT/$SCENARIO.XXXXXX")
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@localhost
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@localhost
failures=0

cleanup() {
  local code=$?
  if [ "$code" -eq 0 ] && [ "$failures" -eq 0 ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL [$SCENARIO]: $*" >&2
  failures=$((failures + 1))
}

expect_eq() {  # expect_eq ACTUAL EXPECTED WHAT
  if [ "$1" != "$2" ]; then fail "$3: expected '$2', got '$1'"; fi
}

expect_contains() {  # expect_contains HAYSTACK NEEDLE WHAT
  case "$1" in *"$2"*) ;; *) fail "$3: '$2' not in: $1" ;; esac
}

expect_not_contains() {  # expect_not_contains HAYSTACK NEEDLE WHAT
  case "$1" in *"$2"*) fail "$3: '$2' in: $1" ;; esac
}

finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$SCENARIO: $failures failure(s)" >&2
    exit 1
  fi
  echo "$SCENARIO: ok"
}

# sql DIR QUERY: runs a read-only query on the loop's ledger.
sql() {
  sqlite3 -readonly -batch -noheader "$1/.ratchet/ledger.db" "$2"
}

# wait_until SECONDS COMMAND...: polls COMMAND until it succeeds or time runs out.
wait_until() {
  local limit=$1
  shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
    sleep 0.05
  done
}

# A pid namespace is named by its inode ("pid:[4026532...]"), and the kernel
# gives a freed namespace's inode to the next namespace made on the machine,
# by any test running beside this one. hold_pidns NS opens NS through one of
# its processes and keeps it open while this shell lives, so NS stays
# allocated and a later in_pidns NS cannot mistake a stranger's new
# namespace for it. Call it while a process of NS runs. (The descriptor,
# opened by exec, stays open after the function returns.)
hold_pidns() {
  local p fd
  for p in /proc/[0-9]*/ns/pid; do
    [ "$(readlink "$p" 2>/dev/null)" = "$1" ] || continue
    { exec {fd}<"$p"; } 2>/dev/null || continue
    # The pid may have been reused between the readlink and the open.
    [ "$(readlink "/proc/$$/fd/$fd")" = "$1" ] && return 0
    exec {fd}<&-
  done
  return 1
}

# in_pidns NS: some process of this machine lives in pid namespace NS
# (held with hold_pidns, so that the name is still NS's own).
in_pidns() {
  local p
  for p in /proc/[0-9]*/ns/pid; do
    [ "$(readlink "$p" 2>/dev/null)" = "$1" ] && return 0
  done
  return 1
}

# git_init DIR: commits everything in DIR as a new repository.
git_init() {
  git -C "$1" init -q -b main
  printf '.ratchet/\n' >>"$1/.gitignore"
  git -C "$1" add -A
  git -C "$1" commit -qm "loop"
}

# cmd || stopped_by_rule || fail ...: `ratchet run` exits 3 when a stop rule
# other than the target ended the loop (max_experiments, wall, patience,
# cost, tokens) and 5 for the circuit breaker: a clean stop, not a failure.
stopped_by_rule() {
  local rc=$?
  [ "$rc" -eq 3 ] || [ "$rc" -eq 5 ]
}

# sandbox_table [WRITABLE...]: the text of a [sandbox] table that shows the
# stand-in agents (tests/agents) read-only inside ratchet's sandbox, and each
# WRITABLE folder (absolute; created here) writable, e.g. where a stand-in
# logs its prompts. Steps stay sandboxed: nothing else of the host is seen.
sandbox_table() {
  local writable="" d
  for d in "$@"; do
    mkdir -p "$d"
    writable+="${writable:+, }\"$d\""
  done
  printf '[sandbox]\nreadable = ["%s"]\n' "$RATCHET_HOME/tests/agents"
  if [ -n "$writable" ]; then printf 'writable = [%s]\n' "$writable"; fi
}

# pid_alive PID
pid_alive() { kill -0 "$1" 2>/dev/null; }

# set_table DIR TABLE TEXT: replaces the [TABLE] table of DIR/ratchet.toml
# (its header and keys, up to the next table) with TEXT, adding it when
# absent, and commits the change, e.g. to put a stand-in agent in place of
# a template's real one.
set_table() {
  python3 - "$1/ratchet.toml" "$2" "$3" <<'PY'
import re, sys
path, table, text = sys.argv[1:]
lines = open(path).read().splitlines(keepends=True)
out, skipping, done = [], False, False
for line in lines:
    if re.match(r"\[\[?[^\]]+\]\]?\s*(#.*)?$", line.strip()):
        skipping = line.strip().split("#")[0].strip() == "[" + table + "]"
        if skipping and not done:
            out.append(text.rstrip("\n") + "\n")
            done = True
    if not skipping:
        out.append(line)
if not done:
    out.append("\n" + text.rstrip("\n") + "\n")
open(path, "w").write("".join(out))
PY
  git -C "$1" commit -qam "test: [$2] for this test"
}

# start_webhook_server MODE NAME: tests/e2e/webhook_server.py in the
# background (MODE ok, fail or hang), recording each request as a JSON line
# in $WORK/NAME.log; sets PORT. The servers end with the scenario.
WEBHOOK_SERVERS=()
start_webhook_server() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/webhook_server.py" "$1" "$WORK/$2.port" "$WORK/$2.log" &
  WEBHOOK_SERVERS+=("$!")
  if [ "${#WEBHOOK_SERVERS[@]}" -eq 1 ]; then
    trap 'for p in "${WEBHOOK_SERVERS[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT
  fi
  wait_until 10 test -s "$WORK/$2.port" || fail "webhook server $2 did not start"
  PORT=$(cat "$WORK/$2.port")
}
