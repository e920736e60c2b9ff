// `ratchet prompt DIR`: prints the exact prompt the agent proposer would send
// for the next experiment, without running anything or writing anything.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "notify/ledger_steering.h"
#include "propose/agent_proposer.h"
#include "store/sqlite_ledger.h"
#include "vcs/workspace_fs.h"

namespace ratchet {
namespace {

struct PromptOptions {
  std::string dir;
};

int Prompt(const PromptOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  auto section_it = config.propose_sections.find("agent");
  if (section_it == config.propose_sections.end())
    return Fail(paths.config +
                " has no [propose.agent] section; `ratchet prompt` shows the "
                "agent proposer's prompt (see docs/agents.md)");
  ConfigSection section = section_it->second;
  AgentConfig agent;
  ReadAgentConfig(section, &agent);
  if (!section.Finish(&err)) return Fail(err);

  // The loop so far, as the next `ratchet run` will see it.
  std::vector<Experiment> history;
  std::vector<std::string> notes;
  if (FileExists(paths.ledger)) {
    std::unique_ptr<SqliteLedger> ledger;
    if (!OpenLedgerReadOnly(paths, &ledger).Report(&err) ||
        !ledger->LoadExperiments(&history, &err))
      return Fail(err);
    // steering: the user's notes (`ratchet note`), as the running loop adds them.
    notes = LedgerSteering(ledger.get()).Guidance();
  }
  int next = static_cast<int>(history.size()) + 1;
  std::vector<Experiment> done;
  for (const Experiment& e : history)
    if (e.phase == Phase::kDone) done.push_back(e);
  if (done.size() != history.size())
    std::cerr << "ratchet: #" << history.back().id
              << " is unfinished; the next `ratchet run` records it first, so its line is "
                 "missing here\n";
  if (done.empty()) {
    std::cerr << "ratchet: no experiment yet: #1 is the baseline, which runs the code "
                 "unchanged; this is the prompt #2 would get before the baseline's result\n";
    next = 2;
  }
  const Experiment* incumbent = nullptr;
  for (const Experiment& e : done)
    if (e.status == Status::kKeep) incumbent = &e;
  if (config.outer.present())
    std::cerr << "ratchet: guidance from the outer loop is added when the loop runs; it is "
                 "not shown here\n";
  if (config.propose_kind != "agent")
    std::cerr << "ratchet: note: this loop's proposer is '" << config.propose_kind
              << "', not 'agent'\n";

  FsWorkspace workspace(paths.dir);
  ProposalRequest request;
  request.experiment_id = next;
  request.worktree = workspace.root();
  request.run_dir = workspace.root() + "/.ratchet/runs/" + std::to_string(next);
  request.config = &config;
  request.history = &done;
  request.incumbent = incumbent;
  request.guidance = notes;
  std::string prompt;
  if (!RenderAgentPrompt(agent, request, &workspace, &prompt, &err)) return Fail(err);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return 0;
}

}  // namespace

void AddPromptCommand(CLI::App& app) {
  auto options = std::make_shared<PromptOptions>();
  CLI::App* cmd = app.add_subcommand(
      "prompt",
      "Print the exact prompt the agent proposer ([propose.agent]) would get for the next "
      "experiment in DIR, without running anything");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->callback([options] { ExitCode() = Prompt(*options); });
}

}  // namespace ratchet
