#!/usr/bin/env bash
# `ratchet schedule`: the systemd user units and the crontab line it writes
# and removes, tested without systemd or cron (stand-ins for systemctl and
# crontab record what they are asked): the generated ExecStart line and cron
# command are run directly, and resume the loop; they do nothing while the
# loop runs already; past --until, the next start removes the schedule.
source "$(dirname "$0")/lib.sh"

export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config
mkdir -p "$HOME" "$WORK/bin"
cat >"$WORK/bin/systemctl" <<SH
#!/bin/sh
echo "\$*" >>"$WORK/systemctl.log"
SH
cat >"$WORK/bin/crontab" <<SH
#!/bin/sh
# crontab -l | crontab -, on a file.
case "\$1" in
  -l) [ -f "$WORK/crontab" ] && cat "$WORK/crontab" || { echo "no crontab for test" >&2; exit 1; } ;;
  -) cat >"$WORK/crontab" ;;
  *) echo "crontab stand-in: \$*" >&2; exit 2 ;;
esac
SH
chmod +x "$WORK/bin/systemctl" "$WORK/bin/crontab"
export RATCHET_SYSTEMCTL=$WORK/bin/systemctl RATCHET_CRONTAB=$WORK/bin/crontab

# hold_lock FILE: holds an flock(2) on FILE, as a running `ratchet run`
# does, in one process (so killing it releases the lock); release_lock ends it.
hold_lock() {
  python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close(); time.sleep(120)' \
    "$1" "$WORK/held" &
  holder=$!
  wait_until 10 test -e "$WORK/held" || fail "could not hold the lock"
}
release_lock() {
  kill "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
  rm -f "$WORK/held"
}

L=$WORK/night
"$RATCHET" init --template toy "$L" >/dev/null
set_table "$L" stop '[stop]
max_experiments = 5'
UNITS=$XDG_CONFIG_HOME/systemd/user

# systemd: a timer and a service.
out=$("$RATCHET" schedule "$L" --every 1h --backend systemd) || fail "schedule failed: $out"
expect_contains "$out" "scheduled night: every 1h" "schedule says what it did"
service=$UNITS/ratchet-night.service
timer=$UNITS/ratchet-night.timer
[ -f "$service" ] && [ -f "$timer" ] || fail "units not written"
expect_eq "$(sed -n 's/^OnCalendar=//p' "$timer")" "*-*-* *:00:00" "hourly"
expect_eq "$(sed -n 's/^Unit=//p' "$timer")" "ratchet-night.service" "the timer's unit"
expect_eq "$(sed -n 's/^WorkingDirectory=//p' "$service")" "$L" "the loop directory"
exec_start=$(sed -n 's/^ExecStart=//p' "$service")
expect_eq "$exec_start" "$(realpath "$RATCHET") run --if-idle $L" "ExecStart"
expect_eq "$(cat "$WORK/systemctl.log")" "--user daemon-reload
--user enable --now ratchet-night.timer" "systemctl calls"

# The ExecStart line, run as systemd would: it resumes the loop (here for
# 3 experiments of its 5, so that the cron run below has some left).
out=$(cd "$L" && eval "$exec_start" --max-experiments 3 2>&1) || stopped_by_rule || fail "ExecStart failed: $out"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 3 "the scheduled run ran the loop"
# While the loop runs (its lock is held), the scheduled run does nothing and exits 0.
hold_lock "$L/.ratchet/lock"
set +e
out=$(cd "$L" && eval "$exec_start" --max-experiments 5 2>&1)
code=$?
set -e
release_lock
expect_eq "$code" 0 "a busy loop: exit 0"
expect_contains "$out" "nothing to do" "a busy loop: says so"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 3 "a busy loop: nothing ran"
# A plain `ratchet run` still refuses a busy loop.
hold_lock "$L/.ratchet/lock"
set +e
"$RATCHET" run "$L" >/dev/null 2>&1
code=$?
set -e
release_lock
expect_eq "$code" 2 "without --if-idle a busy loop is an error"

# A name in use by another loop is refused.
mkdir -p "$WORK/other"
"$RATCHET" init --template toy "$WORK/other/night" >/dev/null
set +e
out=$("$RATCHET" schedule "$WORK/other/night" --every 1h --backend systemd 2>&1)
code=$?
set -e
expect_eq "$code" 1 "name clash: exit code"
expect_contains "$out" "a schedule named night runs another loop ($L); give this one --name NAME" "name clash"

# --remove: the timer is disabled and the files are gone.
: >"$WORK/systemctl.log"
out=$("$RATCHET" schedule "$L" --remove) || fail "remove failed: $out"
[ ! -e "$service" ] && [ ! -e "$timer" ] || fail "units not removed"
expect_contains "$(cat "$WORK/systemctl.log")" "--user disable --now ratchet-night.timer" "timer disabled"

# --until: once past it, the next start removes the schedule instead of running.
until_at=$(( $(date +%s) + 2 ))
out=$("$RATCHET" schedule "$L" --at 02:30 --until "@$until_at" --backend systemd) || fail "schedule --until failed: $out"
expect_eq "$(sed -n 's/^OnCalendar=//p' "$timer")" "*-*-* 02:30:00" "daily at 02:30"
exec_start=$(sed -n 's/^ExecStart=//p' "$service")
expect_contains "$exec_start" "--until @$until_at --schedule-name night" "the end time reaches the unit"
wait_until 10 sh -c "test \$(date +%s) -gt $until_at" || fail "time stood still"
out=$(cd "$L" && eval "$exec_start" 2>&1) || fail "ExecStart past --until failed: $out"
expect_contains "$out" "ended at" "past --until: says the schedule ended"
[ ! -e "$service" ] && [ ! -e "$timer" ] || fail "past --until: units not removed"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 3 "past --until: nothing ran"

# cron: one marked line, replaced on a second schedule, removed with --remove;
# the user's other lines stay.
echo "0 5 * * * /usr/bin/backup # mine" >"$WORK/crontab"
"$RATCHET" schedule "$L" --every 30m --backend cron >/dev/null || fail "cron schedule failed"
"$RATCHET" schedule "$L" --every 15m --backend cron >/dev/null || fail "cron reschedule failed"
expect_eq "$(grep -c 'ratchet-schedule:night' "$WORK/crontab")" 1 "one line per schedule"
line=$(grep 'ratchet-schedule:night' "$WORK/crontab")
expect_eq "${line%% cd *}" "*/15 * * * *" "every 15 minutes"
expect_contains "$line" "'$(realpath "$RATCHET")' 'run' '--if-idle' '$L'" "the cron command"
# The command part, as cron's sh would run it.
(cd / && sh -c "${line#*\* \* \* \* }") || stopped_by_rule || fail "the cron command failed"
expect_eq "$(sql "$L" "SELECT count(*) FROM experiments")" 5 "the cron command resumed the loop"
[ -s "$L/.ratchet/schedule.log" ] || fail "the cron run's output is in .ratchet/schedule.log"
"$RATCHET" schedule "$L" --remove >/dev/null || fail "cron remove failed"
expect_eq "$(cat "$WORK/crontab")" "0 5 * * * /usr/bin/backup # mine" "only the user's line is left"

# What cron and systemd cannot say is refused with the reason.
set +e
out=$("$RATCHET" schedule "$L" --every 45m --backend cron 2>&1)
set -e
expect_contains "$out" "the step must divide an hour" "--every 45m refused"
finish
