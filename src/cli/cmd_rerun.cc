// `ratchet rerun DIR ID`: runs experiment ID's change again, in full (no
// pruning, no preflight), on the loop's current incumbent, as the next
// experiment of `ratchet run` (running now, or the next time it runs). For
// an experiment that pruning cut, or one that failed for a reason fixed
// since. Recorded in the ledger as a "rerun" event; `ratchet run` marks it
// served ("rerun_taken") when it starts the experiment, which is then listed
// with proposer "rerun" and the description "rerun of #ID: ...".
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "cli/user_event.h"
#include "notify/ledger_steering.h"
#include "store/sqlite_ledger.h"

namespace ratchet {
namespace {

struct RerunOptions {
  std::string dir;
  int id = 0;
};

int Rerun(const RerunOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  if (!FileExists(paths.ledger))
    return Fail(paths.dir + " has no ledger yet: `ratchet run " + options.dir + "` starts the loop");
  std::vector<Experiment> history;
  {
    std::unique_ptr<SqliteLedger> ledger;
    if (!OpenLedgerReadOnly(paths, &ledger).Report(&err) ||
        !ledger->LoadExperiments(&history, &err))
      return Fail(err);
  }
  if (options.id < 1 || options.id > static_cast<int>(history.size()))
    return Fail("no experiment #" + std::to_string(options.id) + " (the loop has " +
                std::to_string(history.size()) + ")");
  const Experiment& e = history[static_cast<size_t>(options.id - 1)];
  const std::string name = "#" + std::to_string(e.id);
  if (e.baseline) return Fail(name + " is the baseline: it has no change to run again");
  if (e.phase != Phase::kDone) return Fail(name + " is still in flight");
  if (e.status == Status::kKeep) return Fail(name + " is kept: its change is in the branch already");
  if (e.candidate_commit.empty() || e.candidate_commit == e.parent_commit)
    return Fail(name + " (" + StatusName(e.status) + ") made no commit to run again");
  std::vector<LedgerEvent> events;
  if (!LoadAllEvents(paths, &events, &err)) return Fail(err);
  for (const RerunRequest& r : PendingReruns(events))
    if (r.experiment_id == e.id) {
      std::printf("a rerun of %s is asked for already\n", name.c_str());
      return 0;
    }
  double at = 0;
  if (!AddUserEvent(paths, "rerun", RerunDetail(e.id), &at, &err)) return Fail(err);
  std::printf("%s (%s: %s) runs again in full on the current incumbent as the next experiment "
              "of `ratchet run %s`\n",
              name.c_str(), StatusName(e.status), e.description.c_str(), options.dir.c_str());
  return 0;
}

}  // namespace

void AddRerunCommand(CLI::App& app) {
  auto options = std::make_shared<RerunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "rerun",
      "Run experiment ID's change again, in full (no pruning, no preflight), on the current "
      "incumbent, as the next experiment of the loop in DIR (running now or later); recorded in "
      "the ledger");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_option("id", options->id, "The experiment, e.g. a pruned one")->required();
  cmd->callback([options] { ExitCode() = Rerun(*options); });
}

}  // namespace ratchet
