// `ratchet status DIR`: where a loop stands, from the ledger and live.json.
#include <signal.h>

#include <cerrno>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "core/accept.h"
#include "core/stop.h"
#include "exec/system_clock.h"
#include "notify/ledger_steering.h"
#include "store/live_status.h"
#include "store/sqlite_ledger.h"

namespace ratchet {
namespace {

bool Alive(long long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

int ShowStatus(const std::string& dir) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(&err)) return Fail(err);
  std::vector<Experiment> history;
  std::vector<Session> sessions;
  std::map<std::pair<std::string, std::string>, long long> calls;
  if (!ledger->LoadExperiments(&history, &err) || !ledger->LoadSessions(&sessions, &err) ||
      !ledger->LoadMechanismCalls(&calls, &err))
    return Fail(err);

  std::printf("loop:       %s (branch ratchet/%s)\n", paths.dir.c_str(), config.tag.c_str());
  std::printf("goal:       %s %s", config.goal == Goal::kMin ? "minimise" : "maximise",
              config.metric_name.c_str());
  if (config.target) std::printf(", target %s", FormatMetric(*config.target).c_str());
  std::printf("\n");

  const Experiment* best = nullptr;
  for (const Experiment& e : history)
    if (e.status == Status::kKeep) best = &e;
  if (best) {
    std::printf("best:       #%d %s=%s (commit %s): %s\n", best->id, config.metric_name.c_str(),
                best->metric ? FormatMetric(*best->metric).c_str() : "-",
                Short(best->candidate_commit).c_str(), best->description.c_str());
    const Experiment* baseline = nullptr;
    for (const Experiment& e : history)
      if (e.baseline && e.status == Status::kKeep) baseline = &e;
    if (baseline && baseline != best && baseline->metric && best->metric)
      std::printf("            baseline #%d %s=%s\n", baseline->id, config.metric_name.c_str(),
                  FormatMetric(*baseline->metric).c_str());
  } else {
    std::printf("best:       none yet\n");
  }

  std::map<Status, int> counts;
  double total_s = 0;
  for (const Experiment& e : history) {
    ++counts[e.status];
    if (e.finished_at > e.started_at) total_s += e.finished_at - e.started_at;
  }
  std::string count_text;
  for (const auto& [status, n] : counts)
    count_text += (count_text.empty() ? "" : ", ") +
                  std::string(status == Status::kNone ? "unfinished" : StatusName(status)) + " " +
                  std::to_string(n);
  std::printf("experiments: %zu", history.size());
  if (config.max_experiments) std::printf(" of %d", *config.max_experiments);
  std::printf(" (%s)\n", count_text.c_str());
  std::printf("time:       %s in experiments", FormatDuration(total_s).c_str());
  if (config.wall_s) std::printf(" (stop.wall %s)", FormatDuration(*config.wall_s).c_str());
  std::printf("\n");
  Usage usage = TotalUsage(history);
  if (!usage.empty())
    std::printf("proposer:   %lld tokens in, %lld out, $%.2f\n",
                static_cast<long long>(usage.input_tokens),
                static_cast<long long>(usage.output_tokens), usage.cost_usd);
  if (!calls.empty()) {
    std::printf("mechanisms:\n");
    for (const auto& [key, n] : calls)
      std::printf("  %-24s %-16s %lld calls\n", key.first.c_str(), key.second.c_str(), n);
  }

  // Facts that did not fail an experiment but the user should know (e.g. it
  // ran without the sandbox, an agent printed no usage report).
  int warned = 0;
  const Experiment* last_warned = nullptr;
  for (const Experiment& e : history)
    if (!e.warnings.empty()) ++warned, last_warned = &e;
  if (last_warned)
    std::printf("warnings:   %d experiment%s (last, #%d: %s; `ratchet show %s %d`)\n", warned,
                warned == 1 ? "" : "s", last_warned->id, last_warned->warnings.back().c_str(),
                dir.c_str(), last_warned->id);

  // steering: a pause, the user's notes and reruns asked for (`ratchet pause` /
  // `note` / `rerun`).
  std::vector<LedgerEvent> events;
  if (!ledger->LoadEvents(0, &events, &err)) return Fail(err);
  PauseState pause = PauseStateOf(events);
  int notes = 0;
  for (const LedgerEvent& e : events) notes += e.kind == "note";
  if (pause.paused)
    std::printf("paused:     since %s (`ratchet resume %s` lets it go on)\n",
                FormatUtcMinute(pause.since).c_str(), dir.c_str());
  if (notes > 0)
    std::printf("notes:      %d from the user (`ratchet note %s` lists them)\n", notes, dir.c_str());
  std::string reruns;
  for (const RerunRequest& r : PendingReruns(events))
    reruns += (reruns.empty() ? "#" : ", #") + std::to_string(r.experiment_id);
  if (!reruns.empty())
    std::printf("reruns:     %s asked for (`ratchet rerun`), next to run\n", reruns.c_str());

  LiveStatus live;
  bool have_live = ReadLiveStatus(paths.live, &live, &err);
  if (have_live && live.stop_reason.empty() && Alive(live.pid)) {
    double now = SystemClock()->WallSeconds();
    std::printf("running:    pid %lld, #%d %s for %s", live.pid, live.experiment_id,
                live.phase.c_str(), FormatDuration(now - live.phase_started_at).c_str());
    if (live.phase == "running" && live.run_started_at > 0)
      std::printf(" (run %s of a %s budget)", FormatDuration(now - live.run_started_at).c_str(),
                  FormatDuration(live.budget_s).c_str());
    std::printf("\n");
    if (!live.progress.empty()) std::printf("            %s\n", live.progress.c_str());
    // With workers, every experiment in flight (the ledger has each one's phase).
    int in_flight = 0;
    for (const Experiment& e : history) in_flight += e.phase != Phase::kDone;
    if (in_flight > 1) {
      std::printf("in flight:  %d\n", in_flight);
      for (const Experiment& e : history)
        if (e.phase != Phase::kDone)
          std::printf("  #%-4d worker %d  %-10s for %s  %s\n", e.id, e.worker, PhaseName(e.phase),
                      FormatDuration(now - e.started_at).c_str(), e.description.c_str());
    }
  } else {
    std::string last = sessions.empty() ? "" : sessions.back().stop_reason;
    if (!sessions.empty() && last.empty()) last = "ratchet was killed; `ratchet run` resumes";
    std::printf("running:    no%s%s\n", last.empty() ? "" : " (last stop: ", last.empty() ? "" : (last + ")").c_str());
  }
  return 0;
}

}  // namespace

void AddStatusCommand(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "status", "Show where the loop in DIR stands: best result, counts by status, time and "
                "money used, mechanism calls, and what is running now");
  cmd->add_option("dir", *dir, "The loop directory")->required();
  cmd->callback([dir] { ExitCode() = ShowStatus(*dir); });
}

}  // namespace ratchet
