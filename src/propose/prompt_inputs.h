// Gathers what the agent's prompt is built from (see prompt_builder.h): the
// loop's program.md, read fresh every experiment, the tail of
// .ratchet/notes.md and the end of the last run's log, through the
// Workspace port; the rest comes from the engine's request.
#pragma once

#include <string>

#include "core/proposer.h"
#include "core/workspace.h"
#include "propose/prompt_builder.h"

namespace ratchet {

/// Fills *in for `request`. `program` is the skill file, relative to the
/// loop. False with a message when it cannot be read; a missing notes file or
/// log is not an error (they are left out).
bool GatherPromptInputs(const ProposalRequest& request, Workspace* workspace,
                        const std::string& program, const PromptLimits& limits, PromptInputs* in,
                        std::string* err);

/// GatherPromptInputs, then BuildPrompt.
bool RenderPrompt(const ProposalRequest& request, Workspace* workspace, const std::string& program,
                  const PromptLimits& limits, std::string* prompt, std::string* err);

}  // namespace ratchet
