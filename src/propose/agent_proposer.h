// The `agent` proposer: a coding agent CLI (Claude Code, Codex, aider, or any
// program) edits the loop's files, prompted by ratchet.
//   [propose.agent]
//   command = ["claude", "-p", "--output-format", "json", "--permission-mode", "acceptEdits"]
//   input = "stdin"          # or "file": the prompt only in {prompt_file}
//   timeout = "15m"
//   model = "sonnet"         # optional label, for {model} and the records
//   program = "program.md"   # the skill, read fresh every experiment
//   history = 15             # rows of recent experiments in the prompt
//   notes_lines = 40         # tail of .ratchet/notes.md in the prompt
//   log_lines = 40           # tail of the last run log in the prompt
// Each experiment, ratchet writes the prompt (prompt_builder.h) to
// .ratchet/runs/<id>/prompt.md, runs the command in the loop directory with
// the prompt on stdin (or not), keeps its output in agent.log, reads the
// description, and usage from a JSON report (agent_output.h), and records
// the facts of the run in agent.json. .git and .ratchet are read-only to the
// agent where a sandbox works, and guarded either way (agent_guard.h).
// A timeout, a non-zero exit, an error report or a guard finding is a failed
// proposal; the engine records it and restores the tree.
#pragma once

#include <memory>
#include <string>

#include "core/config_section.h"
#include "core/proposer.h"
#include "propose/agent_command.h"
#include "propose/prompt_builder.h"

namespace ratchet {

struct AgentConfig {
  AgentCommand command;
  std::string model;
  std::string program = "program.md";
  PromptLimits limits;
};

/// Reads [propose.agent]; errors are recorded in `section`.
void ReadAgentConfig(ConfigSection& section, AgentConfig* config);

std::unique_ptr<Proposer> MakeAgentProposer(ConfigSection& section, const LoopConfig& config,
                                            const ProposerDeps& deps, std::string* err);

/// The exact prompt the agent proposer sends for `request` (also what
/// `ratchet prompt` prints).
bool RenderAgentPrompt(const AgentConfig& config, const ProposalRequest& request,
                       Workspace* workspace, std::string* prompt, std::string* err);

}  // namespace ratchet
