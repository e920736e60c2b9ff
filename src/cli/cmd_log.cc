// `ratchet log DIR [--json]`: one line per experiment.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "store/sqlite_ledger.h"
#include "store/tsv_export.h"

namespace ratchet {
namespace {

struct LogOptions {
  std::string dir;
  bool json = false;
  bool events = false;
};

int Log(const LogOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(&err)) return Fail(err);
  std::vector<Experiment> history;
  if (!ledger->LoadExperiments(&history, &err)) return Fail(err);
  if (options.json) {
    std::cout << ExperimentsToJson(history) << "\n";
    return 0;
  }
  std::vector<LedgerEvent> events;
  if (!ledger->LoadEvents(0, &events, &err)) return Fail(err);
  // Outer-loop decisions and stops are shown after the experiment they followed.
  std::map<int, std::vector<const LedgerEvent*>> after;
  for (const LedgerEvent& ev : events)
    if (ev.kind != "session_start") after[ev.experiment_id].push_back(&ev);
  const Experiment* best = nullptr;
  for (const Experiment& e : history) {
    std::printf("%s\n", ExperimentLine(e, best, &config, config.metric_name).c_str());
    if (e.status == Status::kKeep) best = &e;
    for (const LedgerEvent* ev : after[e.id])
      std::printf("        %s: %s\n", ev->kind.c_str(), ev->detail_json.c_str());
  }
  return 0;
}

}  // namespace

void AddLogCommand(CLI::App& app) {
  auto options = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "log", "List the experiments of the loop in DIR, one line each: id, status, metric, "
             "change against the best so far, duration, description (and why, for failures)");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_flag("--json", options->json, "Every field of every experiment, as a JSON array");
  cmd->callback([options] { ExitCode() = Log(*options); });
}

}  // namespace ratchet
