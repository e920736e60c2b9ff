// `ratchet pause DIR` / `ratchet resume DIR`: hold a loop between
// experiments and let it go on. Each is a ledger event ("pause", "resume");
// a running `ratchet run` looks for them before each experiment and, while
// paused, waits (polling the ledger) instead of starting the next one. The
// experiment in progress finishes first. `ratchet status` shows the state.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "cli/user_event.h"
#include "notify/ledger_steering.h"

namespace ratchet {
namespace {

int SetPaused(const std::string& dir, bool pause) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(dir, &paths, &err)) return Fail(err);
  std::vector<LedgerEvent> events;
  if (!FileExists(paths.ledger))
    return Fail(paths.dir + " has no ledger yet: `ratchet run " + dir + "` starts the loop");
  if (!LoadAllEvents(paths, &events, &err)) return Fail(err);
  PauseState state = PauseStateOf(events);
  if (state.paused == pause) {
    std::printf("%s is %s already%s\n", dir.c_str(), pause ? "paused" : "not paused",
                pause ? (" (since " + FormatUtcMinute(state.since) + ")").c_str() : "");
    return 0;
  }
  double at = 0;
  const char* kind = pause ? "pause" : "resume";
  if (!AddUserEvent(paths, kind, PauseDetail(std::string("ratchet ") + kind), &at, &err))
    return Fail(err);
  if (pause)
    std::printf("paused at %s: a running loop finishes its current experiment, then waits "
                "(`ratchet resume %s` goes on)\n",
                FormatUtcMinute(at).c_str(), dir.c_str());
  else
    std::printf("resumed at %s\n", FormatUtcMinute(at).c_str());
  return 0;
}

}  // namespace

void AddPauseCommands(CLI::App& app) {
  auto pause_dir = std::make_shared<std::string>();
  CLI::App* pause = app.add_subcommand(
      "pause", "Pause the loop in DIR between experiments: the current one finishes, then "
               "`ratchet run` waits until `ratchet resume DIR` (recorded in the ledger)");
  pause->add_option("dir", *pause_dir, "The loop directory")->required();
  pause->callback([pause_dir] { ExitCode() = SetPaused(*pause_dir, true); });

  auto resume_dir = std::make_shared<std::string>();
  CLI::App* resume = app.add_subcommand("resume", "Let a paused loop in DIR go on");
  resume->add_option("dir", *resume_dir, "The loop directory")->required();
  resume->callback([resume_dir] { ExitCode() = SetPaused(*resume_dir, false); });
}

}  // namespace ratchet
