#include "propose/prompt_inputs.h"

namespace ratchet {
namespace {

// Experiments whose command ran, so they have a run log.
bool Ran(Status s) {
  return s == Status::kKeep || s == Status::kDiscard || s == Status::kCrash ||
         s == Status::kTimeout || s == Status::kPruned ||
         s == Status::kGateFailed;  // an "after" gate: the run happened
}

}  // namespace

bool GatherPromptInputs(const ProposalRequest& request, Workspace* workspace,
                        const std::string& program, const PromptLimits& limits, PromptInputs* in,
                        std::string* err) {
  in->experiment_id = request.experiment_id;
  in->config = request.config;
  in->history = request.history;
  in->incumbent = request.incumbent;
  in->in_flight = request.in_flight;
  in->guidance = request.guidance;
  in->program_name = program;
  in->limits = limits;
  std::string why;
  if (!workspace->ReadFile(program, &in->program, &why)) {
    *err = "cannot read " + program + ", the agent's instructions: " + why;
    return false;
  }
  in->notes.clear();
  if (workspace->Exists(".ratchet/notes.md") &&
      !workspace->ReadFile(".ratchet/notes.md", &in->notes, &why))
    in->notes.clear();
  in->last_log.reset();
  if (request.history && limits.log_lines > 0) {
    for (auto it = request.history->rbegin(); it != request.history->rend(); ++it) {
      if (!Ran(it->status) || it->log_path.empty()) continue;
      LogTail tail;
      if (!workspace->Exists(it->log_path) || !workspace->ReadFile(it->log_path, &tail.text, &why))
        break;  // the latest run's log is gone: say nothing rather than show an older one
      tail.experiment_id = it->id;
      tail.status = StatusName(it->status);
      tail.path = it->log_path;
      in->last_log = std::move(tail);
      break;
    }
  }
  return true;
}

bool RenderPrompt(const ProposalRequest& request, Workspace* workspace, const std::string& program,
                  const PromptLimits& limits, std::string* prompt, std::string* err) {
  PromptInputs in;
  if (!GatherPromptInputs(request, workspace, program, limits, &in, err)) return false;
  *prompt = BuildPrompt(in);
  return true;
}

}  // namespace ratchet
