// Asking a coding agent ([outer.author]) to write a new mechanism: ratchet
// writes a prompt (the protocol, the loop, its trace statistics, what is
// stuck and what the mechanisms so far achieved) to
// .ratchet/mechanisms/<name>/author-prompt.md and runs the agent in that
// folder. The agent must leave an executable `mechanism` there. Its output
// goes to author.log. The loop's own files are hashed before and after, and
// put back (and the mechanism refused) if the agent changed them; .git is
// read-only to it where a sandbox works.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "core/runner.h"
#include "core/workspace.h"
#include "outer/external_mechanism.h"
#include "outer/mechanism_store.h"
#include "outer/outer_config.h"
#include "outer/trace_stats.h"

namespace ratchet {

struct AuthorRequest {
  std::string name;  // of the new mechanism (its folder)
  const LoopConfig* config = nullptr;
  const SearchSpace* space = nullptr;  // may be null
  const std::vector<Experiment>* history = nullptr;
  TraceStats stats;
  /// One line per mechanism so far: its state and effect.
  std::vector<std::string> mechanisms;
  double answer_timeout_s = 5;
  /// Where the agent runs (its folder writable, nothing else of the loop
  /// visible); the network per [outer.author] network. Not enabled: the
  /// loop runs without the sandbox.
  SandboxSpec sandbox;
};

/// The prompt the agent gets.
std::string BuildAuthorPrompt(const AuthorRequest& request);

/// Runs the agent; on success fills *spec (command, cwd, stderr) for the
/// written mechanism. False with *err ("the agent wrote no `mechanism` file
/// (log: ...)").
bool WriteMechanismWithAgent(const AuthorConfig& author, const AuthorRequest& request,
                             ProcessRunner* runner, Workspace* workspace, MechanismStore* store,
                             ExternalSpec* spec, std::string* err);

}  // namespace ratchet
