// `ratchet schedule`: a loop resumed on a timetable, by a systemd user timer
// (~/.config/systemd/user/ratchet-<name>.{service,timer}) or, where systemd
// is absent, a crontab line marked "# ratchet-schedule:<name>". Both run
//   <ratchet> run --if-idle [--until @EPOCH --schedule-name <name>] <dir>
// which does nothing (exit 0) while the loop is running already, and once
// past --until removes the schedule instead of starting.
#pragma once

#include <string>
#include <vector>

namespace ratchet {

/// When the loop starts: every `step` minutes (dividing an hour or a day),
/// or daily at hour:minute.
struct Timetable {
  int every_minutes = 0;  // 0: daily at `hour`:`minute`
  int hour = 0, minute = 0;
};
/// "1h", "30m", "1d" -> a Timetable; false with a message when cron and
/// systemd cannot say it (a step that does not divide an hour or a day).
bool TimetableEvery(const std::string& every, Timetable* out, std::string* err);
/// "HH:MM" -> daily at that time.
bool TimetableAt(const std::string& at, Timetable* out, std::string* err);
/// The systemd OnCalendar= value, e.g. "*-*-* *:00/30:00".
std::string OnCalendar(const Timetable& t);
/// The five cron fields, e.g. "*/30 * * * *".
std::string CronFields(const Timetable& t);

/// "2026-12-31 18:00", "2026-12-31T18:00:00" (local time), "18:00" (the next
/// such time), "+8h" (from now) or "@1798740000" -> unix seconds.
bool ParseUntil(const std::string& text, double now, double* unix_seconds, std::string* err);

struct ScheduleSpec {
  std::string name;     // unit / marker name, [A-Za-z0-9_-]
  std::string dir;      // the loop directory (absolute)
  std::string ratchet;  // the ratchet binary (absolute)
  std::string path_env; // PATH for the scheduled run
  Timetable when;
  double until = 0;     // 0: no end
};

/// The default schedule name of a loop directory: its base name, sanitised.
std::string DefaultScheduleName(const std::string& dir);
/// Checks characters that systemd or cron would read specially; "" if fine.
std::string CheckSchedulable(const ScheduleSpec& spec);
/// The command a schedule runs, as words.
std::vector<std::string> ScheduledCommand(const ScheduleSpec& spec);

std::string ServiceUnit(const ScheduleSpec& spec);
std::string TimerUnit(const ScheduleSpec& spec);
/// The crontab line (ending in the marker comment, no newline).
std::string CronLine(const ScheduleSpec& spec);
std::string CronMarker(const std::string& name);

enum class ScheduleBackend { kSystemd, kCron };
/// Where units go: $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user.
std::string SystemdUserDir();
/// systemd when it runs this machine (/run/systemd/system) and systemctl
/// is found, else cron when crontab is found; false with a message if neither.
bool DetectBackend(ScheduleBackend* backend, std::string* err);

/// Writes and enables the schedule (systemctl --user / crontab; the
/// commands can be replaced through $RATCHET_SYSTEMCTL and $RATCHET_CRONTAB).
/// *done lists what was done, for the user.
bool InstallSchedule(const ScheduleSpec& spec, ScheduleBackend backend,
                     std::vector<std::string>* done, std::string* err);
/// Disables and removes the schedule `name` wherever it is (units and/or
/// crontab line). *found is false when there was none.
bool RemoveSchedule(const std::string& name, bool* found, std::vector<std::string>* done,
                    std::string* err);
/// The loop directory an installed schedule `name` runs, "" if none.
std::string ScheduledDir(const std::string& name);

}  // namespace ratchet
