// The `agent` proposer: a coding agent CLI (Claude Code, Codex, aider, or any
// program) edits the loop's files, prompted by ratchet.
//   [propose.agent]
//   command = ["claude", "-p", "--output-format", "stream-json", "--verbose", ...]
//   input = "stdin"          # or "file": the prompt only in {prompt_file}
//   timeout = "15m"
//   model = "sonnet"         # optional label, for {model} and the records
//   program = "program.md"   # the skill, read fresh every experiment
//   history = 15             # rows of recent experiments in the prompt
//   notes_lines = 40         # tail of .ratchet/notes.md in the prompt
//   log_lines = 40           # tail of the last run log in the prompt
//   env = { CLAUDE_CODE_MAX_RETRIES = "4" }   # more environment for the agent
//   network = true           # in the sandbox, the agent reaches its API
//   tool_sandbox = true      # in the sandbox, the CLI may sandbox its own tools
//   prices = { ... }         # for streamed usage (agent_prices.h)
// Each experiment, ratchet writes the prompt (prompt_builder.h) to
// .ratchet/runs/<id>/prompt.md, runs the command in the loop directory with
// the prompt on stdin (or not) and a scratch $HOME of its own, keeps its
// output in agent.log, reads its spend, errors and description as the output
// arrives (agent_output.h), and records the facts of the run in agent.json.
// At the timeout the agent gets SIGINT (a CLI prints its report, as on
// Ctrl-C), then SIGKILL after [run] grace. .git and .ratchet are read-only to
// the agent where a sandbox works, and guarded either way (state_guard.h).
// A timeout, a non-zero exit, an error report or a guard finding is a failed
// proposal, with the CLI's own words as the reason; the engine records it
// and restores the tree.
#pragma once

#include <memory>
#include <string>

#include "core/config_section.h"
#include "core/proposer.h"
#include "propose/agent_command.h"
#include "propose/agent_prices.h"
#include "propose/prompt_builder.h"

namespace ratchet {

struct AgentConfig {
  AgentCommand command;
  std::string model;
  std::string program = "program.md";
  PromptLimits limits;
  std::vector<std::pair<std::string, std::string>> env;  // added to the agent's environment
  bool network = true;       // the sandbox lets the agent reach the network
  bool tool_sandbox = true;  // and create namespaces to sandbox its own tools
  PriceTable prices = PriceTable::Builtin();
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
