#!/usr/bin/env bash
# The outer loop end to end ([outer] with [outer.author]): a search on a toy
# whose score is flat around the start gets stuck; level 2 asks a scripted
# stand-in agent for a mechanism; ratchet checks it on the recorded trace,
# switches it on, calls it (the ledger's counts prove it) and records its
# effect. A mechanism that crashes in its check, or an agent that writes
# none, never touches the loop, which goes on; every decision is in
# `ratchet log`. [outer] is read strictly.
source "$(dirname "$0")/lib.sh"

MECHS=$RATCHET_HOME/tests/mechanisms
make_loop() {  # make_loop DIR
  mkdir -p "$1"
  cat >"$1/ratchet.toml" <<TOML
[edit]
files = ["params.env"]
protected = ["score.sh"]
[run]
command = "sh score.sh"
budget = "5s"
timeout = "20s"
[metric]
name = "score"
goal = "min"
[propose]
kind = "search"
[propose.search]
algorithm = "local"
seed = 1
[[propose.search.param]]
name = "X"
type = "float"
low = 0.0
high = 1.0
[outer]
every = 3
mechanism_every = 4
stuck_after = 3
mechanisms = []
pool = []
[outer.author]
command = ["sh", "$MECHS/author_standin.sh"]
timeout = "30s"
max = 2
[sandbox]
readable = ["$MECHS"]    # the stand-in agent (an installed CLI is in a system folder)
TOML
  echo "X=0.2" >"$1/params.env"
  # Flat (1) up to X = 0.9, then better the higher X is.
  cat >"$1/score.sh" <<'SH'
. ./params.env
awk -v x="$X" 'BEGIN { s = (x > 0.9) ? 1 - x : 1; print "---"; printf "score: %.4f\n", s }'
SH
  git_init "$1"
}

L=$WORK/loop
make_loop "$L"
out=$("$RATCHET" run "$L" --max-experiments 12 2>&1) || stopped_by_rule || fail "ratchet run failed: $out"
ev() {  # ev DIR MECHANISM ACTION: the experiment after which the event was recorded
  sql "$1" "SELECT group_concat(experiment_id, ' ') FROM events WHERE kind='mechanism'
            AND json_extract(detail, '$.mechanism')='$2' AND json_extract(detail, '$.action')='$3'"
}
# Stuck after #4 (three discards on the plateau): the agent is asked, its
# mechanism checked and switched on.
expect_eq "$(sql "$L" "SELECT group_concat(status, ' ') FROM experiments WHERE id<=4")" \
  "keep discard discard discard" "stuck on the plateau"
expect_eq "$(ev "$L" agent-1 writing)" "4" "agent asked when stuck"
expect_eq "$(ev "$L" agent-1 checked)" "4" "mechanism checked"
expect_eq "$(ev "$L" agent-1 on)" "4" "mechanism switched on"
D=$L/.ratchet/mechanisms/agent-1
[ -x "$D/mechanism" ] || fail "the mechanism is not kept in $D"
expect_contains "$(cat "$D/prompt-seen.md")" '{"type":"before_propose"' "the agent got the protocol"
expect_eq "$(cat "$D/probe.txt")" "loop hidden" "the agent ran in the sandbox: its folder and no more"
expect_contains "$(cat "$D/check.json")" '"ok": true' "check recorded"
expect_contains "$(cat "$D/check.json")" '"synthetic": false' "checked on the recorded trace"
# Called at every experiment from #5 on: the counts prove it ...
expect_eq "$(sql "$L" "SELECT calls FROM mechanism_calls WHERE mechanism='agent-1' AND hook='before_propose'")" \
  "8" "before_propose calls"
expect_eq "$(sql "$L" "SELECT calls FROM mechanism_calls WHERE mechanism='agent-1' AND hook='on_result'")" \
  "8" "on_result calls"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE id>=5 AND mechanisms LIKE '%agent-1%'")" \
  "8" "experiments touched"
# ... and it steered the search past the plateau: its points, kept.
expect_eq "$(sql "$L" "SELECT json_extract(params, '$.X') FROM experiments WHERE id=5")" "0.905" "forced point"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments WHERE id>=5 AND status='keep'")" "8" "keeps"
# Its effect is recorded: in the level-2 event and under .ratchet/mechanisms.
expect_eq "$(sql "$L" "SELECT json_extract(detail, '$.effects.\"agent-1\".keeps') FROM events
                       WHERE kind='outer' AND json_extract(detail, '$.level')='2' AND experiment_id=12")" \
  "8" "effect in the ledger"
expect_contains "$(cat "$D/effect.json")" '"keeps": 8' "effect kept"
expect_contains "$(cat "$D/manifest.json")" '"state": "on"' "manifest"
# Level 1.5 decided every 3 experiments, each with its reason.
expect_eq "$(sql "$L" "SELECT group_concat(experiment_id, ' ') FROM events WHERE kind='outer'
                       AND json_extract(detail, '$.level')='1.5'")" "3 6 9 12" "level 1.5 events"
expect_contains "$(sql "$L" "SELECT json_extract(detail, '$.reason') FROM events WHERE kind='outer'
                             AND experiment_id=6")" "66.7% of the last 3 experiments were kept" "level 1.5 reason"
log=$("$RATCHET" log "$L")
expect_contains "$log" '"mechanism":"agent-1"' "ratchet log shows the decision"
expect_contains "$log" '"passed its check' "ratchet log shows why"
status=$("$RATCHET" status "$L")
expect_contains "$status" "agent-1" "ratchet status shows the mechanism's calls"

# A mechanism that crashes in its check is never switched on; the loop goes
# on, and the agent is asked again (up to max).
C=$WORK/crash
make_loop "$C"
out=$(AUTHOR_MODE=crash "$RATCHET" run "$C" --max-experiments 9 2>&1) || stopped_by_rule || fail "crash run failed: $out"
expect_eq "$(ev "$C" agent-1 check_failed)" "4" "crashing mechanism refused"
expect_eq "$(sql "$C" "SELECT json_extract(detail, '$.kind') FROM events WHERE json_extract(detail, '$.action')='check_failed' AND experiment_id=4")" \
  "crash" "failure kind recorded"
expect_eq "$(ev "$C" agent-2 check_failed)" "8" "asked again when still stuck"
expect_eq "$(sql "$C" "SELECT count(*) FROM mechanism_calls WHERE mechanism LIKE 'agent-%'")" "0" "never called"
expect_eq "$(sql "$C" "SELECT count(*) FROM experiments")" "9" "the loop went on"
expect_contains "$(cat "$C/.ratchet/mechanisms/agent-1/check.json")" '"kind": "crash"' "check kept"

# An agent that writes nothing: recorded, and the loop goes on.
N=$WORK/nothing
make_loop "$N"
out=$(AUTHOR_MODE=nothing "$RATCHET" run "$N" --max-experiments 5 2>&1) || stopped_by_rule || fail "nothing run failed: $out"
expect_contains "$(sql "$N" "SELECT json_extract(detail, '$.reason') FROM events WHERE json_extract(detail, '$.action')='write_failed'")" \
  "wrote no \`mechanism\` file" "no mechanism recorded"
expect_eq "$(sql "$N" "SELECT count(*) FROM experiments")" "5" "the loop went on"

# [outer] is read strictly.
sed -i 's/^every = 3$/evry = 3/' "$N/ratchet.toml"
git -C "$N" commit -qam "typo"
err=$("$RATCHET" run "$N" --max-experiments 6 2>&1) && fail "a typo in [outer] was accepted"
expect_contains "$err" "unknown key 'evry' in [outer]" "strict [outer]"
finish
