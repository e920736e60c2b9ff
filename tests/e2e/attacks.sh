#!/usr/bin/env bash
# Attacks on what is trusted, each made by the RUN of one experiment under
# the default sandbox ([sandbox] required, nothing extra writable). The run
# knows what a hostile run would know: the loop's absolute path, the real
# $HOME of the user running ratchet, and ratchet's pid (which the test reads
# from .ratchet/lock and hands over in a read-only folder). Each attack must
# change nothing trusted (ledger, .git, ratchet itself, the score, hidden
# data, the real home) while the loop goes on; the verifier, not the run,
# decides each score; nothing a run started outlives its experiment.
source "$(dirname "$0")/lib.sh"

L=$WORK/loop
INTEL=$WORK/intel          # what the test tells the run: ratchet's pid
export HOME=$WORK/home     # the user's real home (the ledger key is there)
mkdir -p "$INTEL" "$HOME"
TOKEN=$$-$RANDOM           # marks this scenario's run processes (pgrep -f)
SECRET="hidden-secret-$TOKEN"
# make_loop DIR MAX: the loop (ratchet.toml, run.sh, verify.sh, hidden data)
# in DIR, stopping after MAX experiments; the caller writes propose.sh.
make_loop() {
  local dir=$1 max=$2
  mkdir -p "$dir/data"
  cat >"$dir/ratchet.toml" <<TOML
[edit]
files = ["mode.txt", "extra/*.txt"]
protected = ["run.sh", "verify.sh", "propose.sh", "ratchet.toml"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "2s"
grace = "1s"
[verify]
command = "sh verify.sh"
timeout = "10s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = $max
[sandbox]
readable = ["$INTEL"]
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
TOML
  # Data the runs must not see: in the loop, git-ignored, not in [run] sees.
  echo "$SECRET" >"$dir/data/secret.txt"
  printf 'data/\n' >"$dir/.gitignore"
  echo "good 20" >"$dir/mode.txt"

  # The run: one attack (mode.txt says which), each attempt reported as
  # "attack: WHAT: done|refused", then it saves its "model" (the value) where
  # the verifier reads it and claims a score.
  {
    printf 'LOOP=%s\nREALHOME=%s\nINTEL=%s\nMARK=ratchet-attack-%s\n' "$dir" "$HOME" "$INTEL" "$TOKEN"
    cat <<'SH'
set -- $(cat mode.txt)
mode=$1 value=${2:-1} claim=${2:-1}
say() { echo "attack: $*"; }
try() {  # try WHAT COMMAND...: runs COMMAND, says whether it worked
  what=$1
  shift
  if "$@" >/dev/null 2>&1; then say "$what: done"; else say "$what: refused"; fi
}
ratchet_pid() {
  i=0
  while [ ! -s "$INTEL/ratchet.pid" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
  cat "$INTEL/ratchet.pid"
}
leak() {  # leak FILE: prints what it could read of FILE
  if [ -r "$1" ] && [ -s "$1" ]; then
    say "read $1: done: $(head -c 200 "$1" | tr -cd '[:alnum:]-')"
  else
    say "read $1: refused"
  fi
}
hook='#!/bin/sh
touch "$LOOP/pwned-hook"'
case "$mode" in
  ledger)
    pid=$(ratchet_pid)
    forge="UPDATE experiments SET status = 'keep', metric = 0.0001 WHERE id = 1;
      INSERT INTO experiments (id, session_id, phase, status, metric) VALUES (999, 1, 'done', 'keep', 0.0001);"
    for db in "$LOOP/.ratchet/ledger.db" "/proc/$pid/cwd/.ratchet/ledger.db" \
              "/proc/$pid/root$LOOP/.ratchet/ledger.db" "$RATCHET_RUN_DIR/../../../ledger.db"; do
      try "forge $db" sqlite3 "$db" "$forge"
    done
    for db in "/proc/$pid/cwd/.ratchet/ledger.db" "/proc/$pid/root$LOOP/.ratchet/ledger.db"; do
      try "truncate $db" sh -c ": > '$db'"
    done
    ;;
  kill)
    pid=$(ratchet_pid)
    try "kill -STOP $pid" kill -STOP "$pid"
    try "kill -9 $pid" kill -9 "$pid"
    ;;
  git)
    pid=$(ratchet_pid)
    for g in "$LOOP/.git" "/proc/$pid/cwd/.git" "/proc/$pid/root$LOOP/.git"; do
      try "delete tried refs in $g" sh -c "[ -d '$g/refs/ratchet/tried' ] && rm -rf '$g/refs/ratchet/tried'"
      try "update-ref -d in $g" git --git-dir="$g" update-ref -d refs/ratchet/tried/1
      try "packed-refs in $g" sh -c "[ -e '$g/packed-refs' ] && : > '$g/packed-refs'"
      try "fsmonitor in $g" git --git-dir="$g" config core.fsmonitor "touch $LOOP/pwned-fsmonitor"
      try "hooksPath in $g" git --git-dir="$g" config core.hooksPath "$LOOP/evil-hooks"
      try "hook in $g" sh -c "printf '%s\n' '$hook' > '$g/hooks/post-commit' && chmod +x '$g/hooks/post-commit'"
      try "hook pre-commit in $g" sh -c "printf '%s\n' '$hook' > '$g/hooks/pre-commit'"
    done
    ;;
  gitconfig)
    # A global excludesfile that ignores every file a proposer might add.
    for h in "$HOME" "$REALHOME"; do
      try "ignore list in $h" sh -c "printf 'extra/\n*.txt\n*.log\n' > '$h/.attack-ignore'"
      try "gitconfig in $h" sh -c "printf '[core]\n\texcludesfile = $h/.attack-ignore\n\tfsmonitor = touch $LOOP/pwned-global\n' > '$h/.gitconfig'"
      try "xdg git config in $h" sh -c "mkdir -p '$h/.config/git' && printf '[core]\n\texcludesfile = $h/.attack-ignore\n' > '$h/.config/git/config'"
    done
    try "info/exclude of the loop" sh -c "printf 'extra/\n*.log\n' > '$LOOP/.git/info/exclude'"
    ;;
  claim) claim=0.0001 ;;
  bg)
    # A child in a session of its own, holding the output pipe; the run exits.
    setsid sh -c 'while :; do sleep 1; done' "$MARK-bg" &
    ;;
  term)
    # Children that ignore SIGTERM (one in its own session), and so does the run.
    sh -c 'trap "" TERM; while :; do sleep 1; done' "$MARK-term" &
    setsid sh -c 'trap "" TERM; while :; do sleep 1; done' "$MARK-termbg" &
    trap '' TERM
    while :; do sleep 0.1; done
    ;;
  secret)
    pid=$(ratchet_pid)
    for f in "$LOOP/data/secret.txt" ../../../data/secret.txt "/proc/$pid/cwd/data/secret.txt" \
             "/proc/$pid/root$LOOP/data/secret.txt" "$REALHOME/.config/ratchet/ledger.key" \
             "/proc/$pid/environ" "$LOOP/.ratchet/ledger.db"; do
      leak "$f"
    done
    say "search the loop for secret.txt: $(find "$LOOP" -name secret.txt 2>/dev/null | tr '\n' ' ')"
    # A credential in ratchet's environment (an agent's API key).
    if [ -n "${ATTACK_API_KEY:-}" ]; then say "read \$ATTACK_API_KEY: done: $ATTACK_API_KEY"; else say "read \$ATTACK_API_KEY: refused"; fi
    ;;
esac
echo "$value" > "$RATCHET_RUN_DIR/model"
echo "---"
echo "score: $claim"
SH
  } >"$dir/run.sh"
  # The judge (trusted): the score is the model the run saved.
  cat >"$dir/verify.sh" <<'SH'
test -s "$RATCHET_RUN_DIR/model" || { echo "FAIL: no model"; exit 1; }
echo "---"
echo "score: $(cat "$RATCHET_RUN_DIR/model")"
SH
}

make_loop "$L" 12
cat >"$L/propose.sh" <<'SH'
case "$RATCHET_EXPERIMENT" in
  2) echo "ledger 18" > mode.txt ;;
  3) echo "kill 17" > mode.txt ;;
  4) echo "git 16" > mode.txt ;;
  5) echo "gitconfig 15" > mode.txt ;;
  6) mkdir -p extra; echo new > extra/new.txt; echo "good 14" > mode.txt ;;
  7) echo sneaky > notes.log; echo "good 13" > mode.txt ;;
  8) echo "claim 12" > mode.txt ;;
  9) echo "bg 11" > mode.txt ;;
  10) echo "term 10" > mode.txt ;;
  11) echo "secret 9" > mode.txt ;;
  *) echo "good 8" > mode.txt ;;
esac
echo "case $RATCHET_EXPERIMENT: $(cat mode.txt)"
SH
git_init "$L"

# start_ratchet DIR: `ratchet run DIR` in the background, from inside DIR (so
# /proc/<pid>/cwd is the loop), its output in DIR.log; sets pid and hands it
# to the runs (as a hostile run would know it).
start_ratchet() {
  rm -f "$INTEL/ratchet.pid"
  (cd "$1" && ATTACK_API_KEY="sk-$SECRET" exec "$RATCHET" run "$1") >"$1.log" 2>&1 &
  pid=$!
  wait_until 30 lock_is "$1" "$pid" || fail "ratchet's pid $pid never appeared in $1/.ratchet/lock"
  cat "$1/.ratchet/lock" >"$INTEL/ratchet.pid.new"
  mv "$INTEL/ratchet.pid.new" "$INTEL/ratchet.pid"
}
lock_is() { [ "$(cat "$1/.ratchet/lock" 2>/dev/null)" = "$2" ]; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true; }
exited() { local s; s=$(state_of "$pid"); [ -z "$s" ] || [ "$s" = Z ]; }
stopped() { [ "$(state_of "$pid")" = T ]; }
over() { exited || stopped; }
# end_ratchet DIR: waits for ratchet; expects it alive to the end, never
# stopped, and ending by its stop rule (exit 3) in one session.
end_ratchet() {
  wait_until 120 over || true
  if stopped; then
    fail "ratchet $pid was stopped by a run (state T)"
    kill -CONT "$pid"
  fi
  wait_until 60 exited || { fail "ratchet did not finish"; kill -9 "$pid"; }
  local code=0
  wait "$pid" || code=$?
  expect_eq "$code" 3 "ratchet ended by its stop rule (137: killed): $(tail -3 "$1.log")"
  expect_eq "$(sql "$1" "SELECT count(*) FROM sessions")" 1 "one session: ratchet never restarted"
}
# marked [SUFFIX]: a process of the runs is alive (of one mode: -bg, -term).
marked() { pgrep -f "ratchet-attack-$TOKEN${1:-}" >/dev/null; }
no_marked() { ! marked "${1:-}"; }
is_done() { [ "$(sql "$L" "SELECT phase FROM experiments WHERE id = $1" 2>/dev/null)" = done ]; }
done_or_over() { is_done "$1" || over; }

start_ratchet "$L"
# The run's children are gone once their experiment is over.
# (#10 may start before the check for #9: each checks its own mode's marker.)
for id_mode in 9:-bg 10:-term; do
  id=${id_mode%%:*} mode=${id_mode#*:}
  wait_until 120 done_or_over "$id" || fail "#$id never finished"
  if is_done "$id"; then
    wait_until 2 no_marked "$mode" || fail "after #$id: processes of its run remain: $(pgrep -af "ratchet-attack-$TOKEN$mode")"
  fi
done
end_ratchet "$L"

attempts() { grep '^attack: ' "${2:-$L}/.ratchet/runs/$1/run.log" || true; }
status_of() { sql "${2:-$L}" "SELECT status || ' ' || ifnull(metric, '-') FROM experiments WHERE id = $1"; }
# What each attempt did inside the sandbox ("done" there may have touched only
# the sandbox's own /tmp or scratch home; the checks below say what counts).
show() { echo "#$1: $(status_of "$1" "${2:-$L}")"; attempts "$1" "${2:-$L}" | sed 's/^/    /'; }
for id in 2 3 4 5 11; do show "$id"; done

# The ledger: no forged row, nothing changed behind ratchet's back.
expect_eq "$(sql "$L" "SELECT group_concat(id || ' ' || status, ', ') FROM experiments")" \
  "1 keep, 2 keep, 3 keep, 4 keep, 5 keep, 6 keep, 7 out_of_scope, 8 rejected, 9 keep, 10 timeout, 11 keep, 12 keep" \
  "every attack recorded, the loop went on"
expect_eq "$(status_of 1)" "keep 20.0" "#1 baseline, not forged"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE metric < 1")" 0 "no row with a forged score"
out=$("$RATCHET" audit "$L" --no-rescore 2>&1) || fail "audit after the ledger attacks: $out"
expect_eq "$(sql "$L" "SELECT count(*) FROM runs WHERE sandboxed = 0")" 0 "every run was sandboxed"

# ratchet itself: signals from the run did not reach it.
expect_eq "$(attempts 3 | grep -c ': done')" 0 "#3 a signal reached some process: $(attempts 3)"

# .git: no fsmonitor, hooks path or hook, tried refs intact.
expect_eq "$(git -C "$L" config --get core.fsmonitor || true)" "" "core.fsmonitor of the loop"
expect_eq "$(git -C "$L" config --get core.hooksPath || true)" "" "core.hooksPath of the loop"
expect_eq "$(find "$L/.git/hooks" -type f ! -name '*.sample' 2>/dev/null)" "" "hooks in the loop"
expect_eq "$(ls "$L" | grep pwned || true)" "" "nothing the planted commands would make"
expect_eq "$(cat "$L/.git/info/exclude" 2>/dev/null | grep -c extra || true)" 0 "info/exclude of the loop"
for id in $(sql "$L" "SELECT id FROM experiments WHERE candidate_commit != '' AND baseline = 0"); do
  expect_eq "$(git -C "$L" rev-parse -q --verify "refs/ratchet/tried/$id" || true)" \
    "$(sql "$L" "SELECT candidate_commit FROM experiments WHERE id = $id")" "tried ref of #$id"
done

# The real home: no git configuration planted; a later candidate's new file
# (in edit.files) is still recorded, one outside edit.files still caught.
expect_eq "$(ls -A "$HOME" | grep -v '^.config$' || true)" "" "files planted in the real home"
expect_eq "$(ls -A "$HOME/.config" 2>/dev/null | grep -v '^ratchet$' || true)" "" "files planted in the real ~/.config"
expect_contains "$(sql "$L" "SELECT files_changed FROM experiments WHERE id = 6")" "extra/new.txt" "#6 records its new file"
git -C "$L" cat-file -e "refs/ratchet/tried/6:extra/new.txt" 2>/dev/null || fail "#6's tried commit lacks extra/new.txt"
expect_eq "$(sql "$L" "SELECT reason FROM experiments WHERE id = 7")" \
  "created notes.log, which is not in edit.files" "#7 a file outside edit.files is still seen"

# The score is the verifier's: the run's claim of 0.0001 is rejected.
expect_eq "$(sql "$L" "SELECT status || ': ' || reason FROM experiments WHERE id = 8")" \
  "rejected: claimed score 0.0001, verified 12" "#8 a false claim"
expect_eq "$(status_of 9)" "keep 11.0" "#9 scored by the verifier"

# Runs that outlive themselves: none left, and the time is bounded.
if marked; then fail "processes of the runs remain: $(pgrep -af "ratchet-attack-$TOKEN")"; fi
wall9=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 9")
awk -v w="$wall9" 'BEGIN { exit !(w < 2) }' || fail "#9 run took ${wall9}s: ratchet waited for the background child"
expect_eq "$(sql "$L" "SELECT reason FROM experiments WHERE id = 10")" "killed at run.timeout (2s)" "#10 timed out"
wall10=$(sql "$L" "SELECT wall_s FROM runs WHERE experiment_id = 10")
run10=$(sql "$L" "SELECT run_s FROM experiments WHERE id = 10")
awk -v w="$wall10" -v r="$run10" 'BEGIN { exit !(w <= 5 && r <= 5) }' ||
  fail "#10 took ${wall10}s (run_s $run10): more than timeout 2s + grace 1s + 2s slack"

# Hidden data: the run could read none of it.
# no_leak DIR ID: the run of experiment ID of loop DIR read nothing hidden.
no_leak() {
  local where="${1#"$WORK"/}#$2"
  expect_eq "$(attempts "$2" "$1" | grep -c ': done' || true)" 0 "$where read hidden data: $(attempts "$2" "$1" | grep ': done' || true)"
  expect_eq "$(attempts "$2" "$1" | grep -c ': refused')" 8 "$where refused on every path"
  expect_eq "$(grep -c "$SECRET" "$1/.ratchet/runs/$2/run.log" || true)" 0 "$where the secret in its log"
  expect_contains "$(attempts "$2" "$1" | grep 'search the loop')" "secret.txt: " "$where searched"
  expect_eq "$(attempts "$2" "$1" | grep 'search the loop' | grep -c data/secret || true)" 0 "$where found the secret file"
}
no_leak "$L" 11

expect_eq "$(git -C "$L" status --porcelain)" "" "tree clean"
expect_eq "$(cat "$L/mode.txt")" "good 8" "tree at the incumbent"

# A loop that lives under a system directory the sandbox shows read-only
# (/opt, as in many containers): the same reads and writes, which must fail
# there too. Only where the test may write /opt (as root).
SYS=""
if SYS=$(mktemp -d /opt/ratchet-e2e-attacks.XXXXXX 2>/dev/null); then
  trap 'rm -rf "$SYS"; cleanup' EXIT
  O=$SYS/loop
  make_loop "$O" 4
  cat >"$O/propose.sh" <<'SH'
case "$RATCHET_EXPERIMENT" in
  2) echo "secret 9" > mode.txt ;;
  3) echo "ledger 8" > mode.txt ;;
  *) echo "git 7" > mode.txt ;;
esac
echo "case $RATCHET_EXPERIMENT: $(cat mode.txt)"
SH
  git_init "$O"
  start_ratchet "$O"
  end_ratchet "$O"
  for id in 2 3 4; do show "$id" "$O"; done
  expect_eq "$(sql "$O" "SELECT group_concat(id || ' ' || status, ', ') FROM experiments")" \
    "1 keep, 2 keep, 3 keep, 4 keep" "$O: every attack recorded"
  no_leak "$O" 2
  out=$("$RATCHET" audit "$O" --no-rescore 2>&1) || fail "$O: audit after the ledger attacks: $out"
  expect_eq "$(sql "$O" "SELECT count(*) FROM experiments WHERE metric < 1")" 0 "$O: no forged score"
  expect_eq "$(git -C "$O" config --get core.fsmonitor || true)" "" "$O: core.fsmonitor"
  expect_eq "$(find "$O/.git/hooks" -type f ! -name '*.sample' 2>/dev/null)" "" "$O: hooks"
  expect_eq "$(git -C "$O" rev-parse -q --verify refs/ratchet/tried/2 || true)" \
    "$(sql "$O" "SELECT candidate_commit FROM experiments WHERE id = 2")" "$O: tried ref of #2"
else
  echo "skipped the loop under /opt: /opt is not writable here"
fi
finish
