#include "propose/script_proposer.h"

#include "core/accept.h"
#include "core/runner.h"
#include "core/workspace.h"
#include "propose/history_json.h"

namespace ratchet {
namespace {

class ScriptProposer : public Proposer {
 public:
  ScriptProposer(std::string command, double timeout_s, const ProposerDeps& deps)
      : command_(std::move(command)), timeout_s_(timeout_s), deps_(deps) {}

  std::string kind() const override { return "script"; }

  Proposal Propose(const ProposalRequest& request) override {
    Proposal p;
    const LoopConfig& config = *request.config;
    const std::string rel_dir = ".ratchet/runs/" + std::to_string(request.experiment_id);
    std::string err;
    if (!deps_.workspace->WriteFile(rel_dir + "/history.json", HistoryJson(*request.history),
                                    &err)) {
      p.reason = "could not write the history for the script: " + err;
      return p;
    }
    // Other workers' experiments, so that the script does not propose one
    // of them again (an empty array with one worker).
    static const std::vector<Experiment> kNone;
    if (!deps_.workspace->WriteFile(rel_dir + "/in_flight.json",
                                    HistoryJson(request.in_flight ? *request.in_flight : kNone),
                                    &err)) {
      p.reason = "could not write the experiments in flight for the script: " + err;
      return p;
    }
    std::string guidance;
    for (const std::string& line : request.guidance) guidance += line + "\n";

    RunSpec spec;
    spec.argv = ShellCommand(command_);
    spec.cwd = request.worktree;
    spec.env = {
        {"RATCHET_EXPERIMENT", std::to_string(request.experiment_id)},
        {"RATCHET_SEED", std::to_string(request.seed)},
        {"RATCHET_RUN_DIR", request.run_dir},
        {"RATCHET_METRIC", config.metric_name},
        {"RATCHET_GOAL", config.goal == Goal::kMin ? "min" : "max"},
        {"RATCHET_INCUMBENT_METRIC", request.incumbent && request.incumbent->metric
                                         ? FormatMetric(*request.incumbent->metric)
                                         : ""},
        {"RATCHET_HISTORY", request.run_dir + "/history.json"},
        {"RATCHET_IN_FLIGHT", request.run_dir + "/in_flight.json"},
        {"RATCHET_GUIDANCE", guidance},
        {"GIT_CEILING_DIRECTORIES", deps_.workspace->root() + "/.ratchet/work"},
    };
    spec.timeout_s = timeout_s_;
    spec.grace_s = 2;
    spec.log_path = request.run_dir + "/propose.log";
    spec.cancel = request.cancel;
    spec.sandbox = request.sandbox;
    if (!spec.sandbox.enabled && !spec.sandbox.home.empty())
      spec.env.push_back({"HOME", spec.sandbox.home});
    // The sandbox shows the script its working copy and nothing of .git and
    // .ratchet; where the loop opted out of it, the guard holds (see
    // core/state_guard.h).
    const std::string root = deps_.workspace->root();
    std::unique_ptr<StateGuard> guard = deps_.state_guards();
    if (!guard->Capture(root, {rel_dir + "/propose.log"}, &err)) {
      p.reason = "cannot record ratchet's state before running the script: " + err;
      return p;
    }
    RunResult result = deps_.runner->Run(spec);
    GuardReport report = guard->CheckAndRestore();
    const std::string log = " (log: " + rel_dir + "/propose.log)";
    if (!report.clean()) {
      p.reason = "the propose script " + report.Describe() +
                 "; .git and .ratchet are ratchet's, a proposer must not write them" + log;
      p.stop_loop = report.fatal;
      return p;
    }
    if (!result.ok()) {
      p.reason = "propose script " + result.Describe() + log;
      return p;
    }
    p.description = LastLine(result.tail);
    p.outcome = Proposal::Outcome::kCandidate;
    if (p.description.empty()) p.description = "(the script printed no description)";
    return p;
  }

 private:
  std::string command_;
  double timeout_s_;
  ProposerDeps deps_;
};

}  // namespace

std::string LastLine(const std::string& output) {
  size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = output.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  std::string line = output.substr(start, end - start + 1);
  size_t first = line.find_first_not_of(" \t");
  return first == std::string::npos ? "" : line.substr(first);
}

std::unique_ptr<Proposer> MakeScriptProposer(ConfigSection& section, const LoopConfig&,
                                             const ProposerDeps& deps, std::string* err) {
  std::string command = section.String("command").value_or("");
  double timeout = section.Duration("timeout").value_or(600);
  if (command.empty() && section.ok()) {
    section.Fail("command", section.present()
                                ? "missing: the shell command that edits the files"
                                : "missing: add [propose.script] with command = \"...\"");
  }
  if (!section.ok()) {
    *err = section.error();
    return nullptr;
  }
  if (!deps.state_guards) {
    *err = "internal: the script proposer was given no state guard";
    return nullptr;
  }
  return std::make_unique<ScriptProposer>(command, timeout, deps);
}

}  // namespace ratchet
