#include "propose/agent_proposer.h"

#include <nlohmann/json.hpp>

#include "core/runner.h"
#include "core/workspace.h"
#include "propose/state_guard.h"
#include "propose/agent_output.h"
#include "propose/prompt_inputs.h"

namespace ratchet {
namespace {

const std::vector<std::string> kPlaceholders = {"prompt_file", "prompt",     "model",
                                                "run_dir",     "experiment", "worktree"};

class AgentProposer : public Proposer {
 public:
  AgentProposer(AgentConfig config, double grace_s, const ProposerDeps& deps)
      : config_(std::move(config)), grace_s_(grace_s), deps_(deps) {}

  std::string kind() const override { return "agent"; }

  Proposal Propose(const ProposalRequest& request) override {
    Proposal p;
    const std::string rel_dir = ".ratchet/runs/" + std::to_string(request.experiment_id);
    const std::string log = " (log: " + rel_dir + "/agent.log)";
    std::string prompt, err;
    if (!RenderAgentPrompt(config_, request, deps_.workspace, &prompt, &err)) {
      p.reason = err;
      return p;
    }
    if (!deps_.workspace->WriteFile(rel_dir + "/prompt.md", prompt, &err)) {
      p.reason = "cannot write the agent's prompt: " + err;
      return p;
    }

    const std::string prompt_file = request.run_dir + "/prompt.md";
    const std::map<std::string, std::string> values = {
        {"prompt_file", prompt_file},
        {"prompt", prompt},
        {"model", config_.model},
        {"run_dir", request.run_dir},
        {"experiment", std::to_string(request.experiment_id)},
        {"worktree", request.worktree},
    };
    RunSpec spec;
    spec.argv = ExpandArgv(config_.command.argv, values);
    spec.cwd = request.worktree;
    spec.env = {
        {"RATCHET_EXPERIMENT", std::to_string(request.experiment_id)},
        {"RATCHET_RUN_DIR", request.run_dir},
        {"RATCHET_PROMPT_FILE", prompt_file},
        {"RATCHET_MODEL", config_.model},
    };
    spec.timeout_s = config_.command.timeout_s;
    spec.grace_s = grace_s_;  // [run] grace: how long any command gets after SIGTERM
    spec.log_path = request.run_dir + "/agent.log";
    if (config_.command.input == AgentCommand::Input::kStdin) spec.stdin_data = prompt;
    spec.cancel = request.cancel;
    spec.readonly_paths = {request.worktree + "/.git", request.worktree + "/.ratchet"};
    spec.tail_bytes = 1 << 20;  // a JSON report can be long; it comes last

    // Recorded before the agent starts, checked after it is gone: holds
    // whether or not the sandbox works here.
    StateGuard guard;
    if (!guard.Capture(request.worktree, {rel_dir + "/agent.log"}, &err)) {
      p.reason = "cannot record ratchet's state before running the agent: " + err;
      return p;
    }
    RunResult result = deps_.runner->Run(spec);
    GuardReport report = guard.CheckAndRestore();

    AgentOutput out = ParseAgentOutput(result.tail);
    if (out.has_usage) p.usage = out.usage;
    AgentSummary summary = ExtractSummary(out.final_text);

    if (!report.clean()) {
      p.reason = "the agent " + report.Describe() +
                 "; .git and .ratchet are ratchet's, the agent must not write them" + log;
      p.stop_loop = report.fatal;
    } else if (result.end == RunResult::End::kFailedToStart) {
      p.reason = "could not start the agent (" + spec.argv[0] + "): " + result.error;
    } else if (!result.ok()) {
      p.reason = "the agent " + result.Describe() + log;
    } else if (out.is_error) {
      p.reason = "the agent reported an error (" + out.error_detail + ")" + log;
    } else {
      p.outcome = Proposal::Outcome::kCandidate;
      p.description =
          summary.description.empty() ? "(the agent gave no description)" : summary.description;
      p.hypothesis = summary.hypothesis;
      // Used by the engine only when the tree is unchanged.
      p.reason = "the agent changed nothing; it said: " + p.description;
    }
    WriteRecord(request, rel_dir, spec, result, out, summary, report, p);
    return p;
  }

 private:
  // .ratchet/runs/<id>/agent.json: the facts of this run, for audits.
  void WriteRecord(const ProposalRequest& request, const std::string& rel_dir, const RunSpec& spec,
                   const RunResult& result, const AgentOutput& out, const AgentSummary& summary,
                   const GuardReport& report, const Proposal& p) {
    nlohmann::json argv = nlohmann::json::array();
    for (size_t i = 0; i < spec.argv.size(); ++i) {
      // The prompt itself is in prompt.md; keep the record small.
      bool is_prompt = i < config_.command.argv.size() &&
                       config_.command.argv[i].find("{prompt}") != std::string::npos;
      argv.push_back(is_prompt ? config_.command.argv[i] : spec.argv[i]);
    }
    nlohmann::json record = {
        {"experiment", request.experiment_id},
        {"argv", argv},
        {"model", config_.model},
        {"input", config_.command.input == AgentCommand::Input::kStdin ? "stdin" : "file"},
        {"end", result.Describe()},
        {"wall_s", result.wall_s},
        {"sandboxed", result.sandboxed},
        {"usage_reported", out.has_usage},
        {"usage",
         {{"input_tokens", p.usage.input_tokens},
          {"output_tokens", p.usage.output_tokens},
          {"cost_usd", p.usage.cost_usd}}},
        {"description_marked", summary.marked},
        {"outcome", p.outcome == Proposal::Outcome::kCandidate ? "candidate" : "failed"},
        {"reason", p.outcome == Proposal::Outcome::kCandidate ? "" : p.reason},
        {"guard", report.clean() ? "clean" : report.Describe()},
    };
    std::string err;
    deps_.workspace->WriteFile(rel_dir + "/agent.json", record.dump(2) + "\n", &err);
  }

  AgentConfig config_;
  double grace_s_;
  ProposerDeps deps_;
};

}  // namespace

void ReadAgentConfig(ConfigSection& section, AgentConfig* config) {
  ReadAgentCommand(section, kPlaceholders, 900, &config->command);
  if (auto v = section.String("model")) config->model = *v;
  if (auto v = section.String("program")) {
    if (v->empty())
      section.Fail("program", "must name a file in the loop, e.g. \"program.md\"");
    else
      config->program = *v;
  }
  auto count = [&](const char* key, int* out) {
    if (auto v = section.Integer(key)) {
      if (*v < 0 || *v > 10000)
        section.Fail(key, "must be between 0 and 10000");
      else
        *out = static_cast<int>(*v);
    }
  };
  count("history", &config->limits.history_rows);
  count("notes_lines", &config->limits.notes_lines);
  count("log_lines", &config->limits.log_lines);
}

bool RenderAgentPrompt(const AgentConfig& config, const ProposalRequest& request,
                       Workspace* workspace, std::string* prompt, std::string* err) {
  return RenderPrompt(request, workspace, config.program, config.limits, prompt, err);
}

std::unique_ptr<Proposer> MakeAgentProposer(ConfigSection& section, const LoopConfig& loop,
                                            const ProposerDeps& deps, std::string* err) {
  AgentConfig config;
  ReadAgentConfig(section, &config);
  if (section.ok() && deps.workspace && !deps.workspace->Exists(config.program))
    section.Fail(section.Has("program") ? "program" : "",
                 config.program +
                     " is not in the loop directory; write the agent's "
                     "instructions there (or name another file with program = ...)");
  if (!section.ok()) {
    *err = section.error();
    return nullptr;
  }
  return std::make_unique<AgentProposer>(std::move(config), loop.grace_s, deps);
}

}  // namespace ratchet
