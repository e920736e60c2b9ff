#include "cli/schedule.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/durable_file.h"
#include "cli/loop_dir.h"
#include "core/config_section.h"
#include "exec/local_runner.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

std::string Two(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", v);
  return buf;
}

// The command to run instead of `name` ($RATCHET_SYSTEMCTL, $RATCHET_CRONTAB)
// as words, so tests can stand in for systemd and cron.
std::vector<std::string> Tool(const char* name, const char* override_var) {
  const char* v = std::getenv(override_var);
  if (v && *v) return {"sh", "-c", std::string(v) + " \"$@\"", name};
  return {name};
}

RunResult RunTool(std::vector<std::string> argv, const std::vector<std::string>& args,
                  std::optional<std::string> input = std::nullopt) {
  argv.insert(argv.end(), args.begin(), args.end());
  LocalProcessRunner runner;
  RunSpec spec;
  spec.argv = argv;
  spec.cwd = "/";
  spec.timeout_s = 60;
  spec.stdin_data = std::move(input);
  return runner.Run(spec);
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((d + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

bool WriteText(const std::string& path, const std::string& text, std::string* err) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  return ReplaceFile(path, text, err);
}

// A word for an ExecStart= line or a shell: plain, or in double quotes (the
// characters that would need escaping were refused by CheckSchedulable).
std::string Word(const std::string& w) {
  return w.find_first_of(" \t") == std::string::npos && !w.empty() ? w : "\"" + w + "\"";
}

std::string ShellWord(const std::string& w) { return "'" + w + "'"; }

std::string ServicePath(const std::string& name) {
  return SystemdUserDir() + "/ratchet-" + name + ".service";
}
std::string TimerPath(const std::string& name) {
  return SystemdUserDir() + "/ratchet-" + name + ".timer";
}

// The current crontab, "" when the user has none.
bool ReadCrontab(std::string* text, std::string* err) {
  RunResult r = RunTool(Tool("crontab", "RATCHET_CRONTAB"), {"-l"});
  if (r.ok()) {
    *text = r.tail;
    return true;
  }
  if (r.end == RunResult::End::kExited && r.tail.find("no crontab") != std::string::npos) {
    text->clear();
    return true;
  }
  *err = "crontab -l failed (" + r.Describe() + "): " + r.tail;
  return false;
}

bool WriteCrontab(const std::string& text, std::string* err) {
  RunResult r = RunTool(Tool("crontab", "RATCHET_CRONTAB"), {"-"}, text);
  if (r.ok()) return true;
  *err = "crontab - failed (" + r.Describe() + "): " + r.tail;
  return false;
}

// The crontab without the lines of schedule `name`; *removed counts them.
std::string WithoutSchedule(const std::string& crontab, const std::string& name, int* removed) {
  std::stringstream in(crontab);
  std::string out;
  const std::string marker = CronMarker(name);
  *removed = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= marker.size() &&
        line.compare(line.size() - marker.size(), marker.size(), marker) == 0) {
      ++*removed;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

bool Systemctl(const std::vector<std::string>& args, std::vector<std::string>* done,
               std::string* err) {
  std::vector<std::string> full = {"--user"};
  full.insert(full.end(), args.begin(), args.end());
  RunResult r = RunTool(Tool("systemctl", "RATCHET_SYSTEMCTL"), full);
  std::string line = "systemctl";
  for (const std::string& a : full) line += " " + a;
  if (!r.ok()) {
    *err = line + " failed (" + r.Describe() + "): " + r.tail;
    return false;
  }
  done->push_back("ran " + line);
  return true;
}

}  // namespace

bool TimetableEvery(const std::string& every, Timetable* out, std::string* err) {
  double seconds = 0;
  if (!ParseDuration(every, &seconds, err)) return false;
  long minutes = std::lround(seconds / 60);
  if (minutes * 60.0 != seconds || minutes < 1) {
    *err = "--every " + every + ": the step must be whole minutes";
    return false;
  }
  if ((minutes < 60 && 60 % minutes == 0) || (minutes % 60 == 0 && minutes < 1440 &&
                                              1440 % minutes == 0) || minutes == 1440) {
    *out = Timetable{static_cast<int>(minutes), 0, 0};
    return true;
  }
  *err = "--every " + every + ": cron and systemd timers repeat on the clock, so the step must "
         "divide an hour (1, 2, 3, 4, 5, 6, 10, 12, 15, 20 or 30 minutes) or a day (1, 2, 3, 4, "
         "6, 8 or 12 hours), or be 1d; or use --at HH:MM";
  return false;
}

bool TimetableAt(const std::string& at, Timetable* out, std::string* err) {
  int h = -1, m = -1;
  char tail = 0;
  if (std::sscanf(at.c_str(), "%d:%d%c", &h, &m, &tail) != 2 || h < 0 || h > 23 || m < 0 ||
      m > 59) {
    *err = "--at " + at + ": expected HH:MM, e.g. 02:30";
    return false;
  }
  *out = Timetable{0, h, m};
  return true;
}

std::string OnCalendar(const Timetable& t) {
  if (t.every_minutes == 0) return "*-*-* " + Two(t.hour) + ":" + Two(t.minute) + ":00";
  if (t.every_minutes == 1) return "*-*-* *:*:00";
  if (t.every_minutes < 60) return "*-*-* *:00/" + std::to_string(t.every_minutes) + ":00";
  if (t.every_minutes == 60) return "*-*-* *:00:00";
  if (t.every_minutes < 1440) return "*-*-* 00/" + std::to_string(t.every_minutes / 60) + ":00:00";
  return "*-*-* 00:00:00";
}

std::string CronFields(const Timetable& t) {
  if (t.every_minutes == 0) return std::to_string(t.minute) + " " + std::to_string(t.hour) + " * * *";
  if (t.every_minutes == 1) return "* * * * *";
  if (t.every_minutes < 60) return "*/" + std::to_string(t.every_minutes) + " * * * *";
  if (t.every_minutes == 60) return "0 * * * *";
  if (t.every_minutes < 1440) return "0 */" + std::to_string(t.every_minutes / 60) + " * * *";
  return "0 0 * * *";
}

bool ParseUntil(const std::string& text, double now, double* unix_seconds, std::string* err) {
  if (!text.empty() && text[0] == '@') {
    char* end = nullptr;
    double v = std::strtod(text.c_str() + 1, &end);
    if (end && *end == '\0' && v > 0) {
      *unix_seconds = v;
      return true;
    }
  } else if (!text.empty() && text[0] == '+') {
    double d = 0;
    if (ParseDuration(text.substr(1), &d, err)) {
      *unix_seconds = now + d;
      return true;
    }
  } else {
    std::tm tm{};
    int y, mo, d, h, mi, s = 0;
    char sep = 0, tail = 0;
    std::time_t t = static_cast<std::time_t>(now);
    localtime_r(&t, &tm);
    int n = std::sscanf(text.c_str(), "%d-%d-%d%c%d:%d:%d%c", &y, &mo, &d, &sep, &h, &mi, &s, &tail);
    if ((n == 6 || n == 7) && (sep == ' ' || sep == 'T')) {
      tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
      tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s, tm.tm_isdst = -1;
      *unix_seconds = static_cast<double>(std::mktime(&tm));
      return true;
    }
    Timetable at;
    std::string ignored;
    if (TimetableAt(text, &at, &ignored)) {
      tm.tm_hour = at.hour, tm.tm_min = at.minute, tm.tm_sec = 0, tm.tm_isdst = -1;
      double when = static_cast<double>(std::mktime(&tm));
      if (when <= now) {
        tm.tm_mday += 1;  // mktime normalises the day
        tm.tm_isdst = -1;
        when = static_cast<double>(std::mktime(&tm));
      }
      *unix_seconds = when;
      return true;
    }
  }
  *err = "--until " + text + ": expected \"YYYY-MM-DD HH:MM\" (local time), HH:MM, +DURATION "
         "(e.g. +8h) or @UNIX_SECONDS";
  return false;
}

std::string DefaultScheduleName(const std::string& dir) {
  std::string base = fs::path(dir).filename().string();
  std::string name;
  for (char c : base) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return name.empty() ? "loop" : name;
}

std::string CheckSchedulable(const ScheduleSpec& spec) {
  for (char c : spec.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
      return "--name " + spec.name + ": use letters, digits, - and _";
  // systemd reads % and $ and \ in unit files; cron reads %; quotes would
  // need escaping in both. Loop paths rarely have them; refuse them plainly.
  for (const std::string* s : {&spec.dir, &spec.ratchet, &spec.path_env})
    if (s->find_first_of("%$\\\"'`\n") != std::string::npos)
      return *s + " has a character (% $ \\ \" ' ` or a newline) that systemd or cron would "
             "read specially; move the loop or ratchet to a plainer path";
  return "";
}

std::vector<std::string> ScheduledCommand(const ScheduleSpec& spec) {
  std::vector<std::string> words = {spec.ratchet, "run", "--if-idle"};
  if (spec.until > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "@%.0f", spec.until);
    words.insert(words.end(), {"--until", buf, "--schedule-name", spec.name});
  }
  words.push_back(spec.dir);
  return words;
}

std::string CronMarker(const std::string& name) { return "# ratchet-schedule:" + name; }

std::string ServiceUnit(const ScheduleSpec& spec) {
  std::string exec;
  for (const std::string& w : ScheduledCommand(spec)) exec += (exec.empty() ? "" : " ") + Word(w);
  return "# Written by `ratchet schedule`; `ratchet schedule " + spec.dir +
         " --remove` removes it.\n"
         "[Unit]\n"
         "Description=ratchet loop " + spec.dir + "\n\n"
         "[Service]\n"
         // exec, not oneshot: a loop runs for hours, and a oneshot unit would be
         // killed at its start timeout. While it runs, the timer starts nothing.
         "Type=exec\n"
         "WorkingDirectory=" + Word(spec.dir) + "\n"
         "Environment=" + Word("PATH=" + spec.path_env) + "\n"
         // Secrets ([notify] url_env, an agent's API key) are not written here.
         "EnvironmentFile=-%h/.config/ratchet/" + spec.name + ".env\n"
         "ExecStart=" + exec + "\n"
         // SIGINT is ratchet's "finish this experiment, then stop".
         "KillSignal=SIGINT\n"
         "TimeoutStopSec=30min\n";
}

std::string TimerUnit(const ScheduleSpec& spec) {
  return "# Written by `ratchet schedule`; `ratchet schedule " + spec.dir +
         " --remove` removes it.\n"
         "[Unit]\n"
         "Description=Resume the ratchet loop " + spec.dir + "\n\n"
         "[Timer]\n"
         "OnCalendar=" + OnCalendar(spec.when) + "\n"
         "Persistent=true\n"
         "Unit=ratchet-" + spec.name + ".service\n\n"
         "[Install]\n"
         "WantedBy=timers.target\n";
}

std::string CronLine(const ScheduleSpec& spec) {
  std::string cmd;
  for (const std::string& w : ScheduledCommand(spec)) cmd += (cmd.empty() ? "" : " ") + ShellWord(w);
  return CronFields(spec.when) + " cd " + ShellWord(spec.dir) + " && mkdir -p .ratchet && PATH=" +
         ShellWord(spec.path_env) + " " + cmd + " >>.ratchet/schedule.log 2>&1 " +
         CronMarker(spec.name);
}

std::string SystemdUserDir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/systemd/user";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + "/.config/systemd/user";
}

bool DetectBackend(ScheduleBackend* backend, std::string* err) {
  const char* systemctl = std::getenv("RATCHET_SYSTEMCTL");
  if (FileExists("/run/systemd/system") && ((systemctl && *systemctl) || OnPath("systemctl"))) {
    *backend = ScheduleBackend::kSystemd;
    return true;
  }
  const char* crontab = std::getenv("RATCHET_CRONTAB");
  if ((crontab && *crontab) || OnPath("crontab")) {
    *backend = ScheduleBackend::kCron;
    return true;
  }
  *err = "neither systemd (user timers) nor cron (crontab) is available here; install cron "
         "(apt-get install cron) or run `ratchet run --if-idle DIR` from your own scheduler";
  return false;
}

std::string ScheduledDir(const std::string& name) {
  std::ifstream in(ServicePath(name));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("WorkingDirectory=", 0) == 0) {
      std::string d = line.substr(17);
      if (d.size() >= 2 && d.front() == '"') d = d.substr(1, d.size() - 2);
      return d;
    }
  }
  return "";
}

bool InstallSchedule(const ScheduleSpec& spec, ScheduleBackend backend,
                     std::vector<std::string>* done, std::string* err) {
  if (backend == ScheduleBackend::kSystemd) {
    if (!WriteText(ServicePath(spec.name), ServiceUnit(spec), err) ||
        !WriteText(TimerPath(spec.name), TimerUnit(spec), err))
      return false;
    done->push_back("wrote " + ServicePath(spec.name));
    done->push_back("wrote " + TimerPath(spec.name));
    return Systemctl({"daemon-reload"}, done, err) &&
           Systemctl({"enable", "--now", "ratchet-" + spec.name + ".timer"}, done, err);
  }
  std::string crontab;
  if (!ReadCrontab(&crontab, err)) return false;
  int removed = 0;
  std::string text = WithoutSchedule(crontab, spec.name, &removed);
  text += CronLine(spec) + "\n";
  if (!WriteCrontab(text, err)) return false;
  done->push_back(std::string(removed ? "replaced" : "added") + " the crontab line " +
                  CronMarker(spec.name));
  return true;
}

bool RemoveSchedule(const std::string& name, bool* found, std::vector<std::string>* done,
                    std::string* err) {
  *found = false;
  if (FileExists(TimerPath(name)) || FileExists(ServicePath(name))) {
    *found = true;
    std::string ignored;
    // A timer that systemd never loaded (or no systemd at all) is no reason
    // to keep the files.
    if (!Systemctl({"disable", "--now", "ratchet-" + name + ".timer"}, done, &ignored))
      done->push_back("note: " + ignored);
    for (const std::string& path : {TimerPath(name), ServicePath(name)}) {
      std::error_code ec;
      if (fs::remove(path, ec)) done->push_back("removed " + path);
    }
    if (!Systemctl({"daemon-reload"}, done, &ignored)) done->push_back("note: " + ignored);
  }
  const char* crontab_var = std::getenv("RATCHET_CRONTAB");
  if ((crontab_var && *crontab_var) || OnPath("crontab")) {
    std::string crontab;
    if (!ReadCrontab(&crontab, err)) return false;
    int removed = 0;
    std::string text = WithoutSchedule(crontab, name, &removed);
    if (removed > 0) {
      *found = true;
      if (!WriteCrontab(text, err)) return false;
      done->push_back("removed the crontab line " + CronMarker(name));
    }
  }
  return true;
}

}  // namespace ratchet
