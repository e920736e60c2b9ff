// `ratchet schedule DIR --every 1h|--at HH:MM [--until TIME]`, and
// `ratchet schedule DIR --remove`: resume a loop on a timetable with a
// systemd user timer, or a crontab line where systemd is absent
// (schedule.h). The scheduled command is `ratchet run --if-idle DIR`: it
// does nothing while the loop runs already.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "cli/schedule.h"
#include "exec/system_clock.h"
#include "notify/ledger_steering.h"

namespace ratchet {
namespace {

struct ScheduleOptions {
  std::string dir;
  std::string every;
  std::string at;
  std::string until;
  std::string name;
  std::string backend = "auto";
  bool remove = false;
};

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "ratchet";
  buf[n] = '\0';
  return buf;
}

int Schedule(const ScheduleOptions& o) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(o.dir, &paths, &err)) return Fail(err);
  ScheduleSpec spec;
  spec.dir = paths.dir;
  spec.name = o.name.empty() ? DefaultScheduleName(paths.dir) : o.name;
  std::vector<std::string> done;

  if (o.remove) {
    bool found = false;
    if (!RemoveSchedule(spec.name, &found, &done, &err)) return Fail(err);
    for (const std::string& line : done) std::printf("%s\n", line.c_str());
    if (!found) std::printf("no schedule named %s\n", spec.name.c_str());
    return 0;
  }

  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);  // a loop, and a valid one
  if (o.every.empty() == o.at.empty()) return Fail("give one of --every DURATION or --at HH:MM");
  if (!o.every.empty() ? !TimetableEvery(o.every, &spec.when, &err)
                       : !TimetableAt(o.at, &spec.when, &err))
    return Fail(err);
  const double now = SystemClock()->WallSeconds();
  if (!o.until.empty()) {
    if (!ParseUntil(o.until, now, &spec.until, &err)) return Fail(err);
    if (spec.until <= now) return Fail("--until " + o.until + " is in the past");
  }
  spec.ratchet = SelfPath();
  const char* path = std::getenv("PATH");
  spec.path_env = path ? path : "/usr/local/bin:/usr/bin:/bin";
  if (std::string why = CheckSchedulable(spec); !why.empty()) return Fail(why);

  ScheduleBackend backend;
  if (o.backend == "systemd") backend = ScheduleBackend::kSystemd;
  else if (o.backend == "cron") backend = ScheduleBackend::kCron;
  else if (!DetectBackend(&backend, &err)) return Fail(err);

  std::string other = ScheduledDir(spec.name);
  if (!other.empty() && other != spec.dir)
    return Fail("a schedule named " + spec.name + " runs another loop (" + other +
                "); give this one --name NAME");
  if (!InstallSchedule(spec, backend, &done, &err)) return Fail(err);
  for (const std::string& line : done) std::printf("%s\n", line.c_str());
  std::printf("scheduled %s: %s%s, running `ratchet run --if-idle` (nothing happens while the "
              "loop runs already)\n",
              spec.name.c_str(),
              o.every.empty() ? ("daily at " + o.at).c_str() : ("every " + o.every).c_str(),
              spec.until > 0 ? (", until " + FormatUtcMinute(spec.until)).c_str() : "");
  return 0;
}

}  // namespace

void AddScheduleCommand(CLI::App& app) {
  auto o = std::make_shared<ScheduleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "schedule",
      "Resume the loop in DIR on a timetable: a systemd user timer "
      "(~/.config/systemd/user/ratchet-NAME.{service,timer}), or a crontab line where systemd "
      "is absent. It runs `ratchet run --if-idle DIR`, which does nothing while the loop runs.");
  cmd->add_option("dir", o->dir, "The loop directory")->required();
  cmd->add_option("--every", o->every, "Start every DURATION: 30m, 1h, 6h, 1d");
  cmd->add_option("--at", o->at, "Start daily at HH:MM (local time)");
  cmd->add_option("--until", o->until,
                  "Stop scheduling after TIME: \"YYYY-MM-DD HH:MM\", HH:MM, +8h; the first run "
                  "after it removes the schedule");
  cmd->add_option("--name", o->name, "Schedule name (default: the loop directory's name)");
  cmd->add_option("--backend", o->backend, "auto, systemd or cron")
      ->check(CLI::IsMember({"auto", "systemd", "cron"}));
  cmd->add_flag("--remove", o->remove, "Remove the schedule instead");
  cmd->callback([o] { ExitCode() = Schedule(*o); });
}

}  // namespace ratchet
