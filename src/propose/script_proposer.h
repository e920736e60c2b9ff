// The `script` proposer: any executable that edits files. ratchet runs
//   [propose.script]
//   command = "python3 propose.py"   # a shell command, run in the loop directory
//   timeout = "5m"                   # default 10m
// with RATCHET_EXPERIMENT, RATCHET_SEED, RATCHET_RUN_DIR, RATCHET_METRIC,
// RATCHET_GOAL, RATCHET_INCUMBENT_METRIC, RATCHET_HISTORY (a JSON file of
// every experiment so far, see history_json.h), RATCHET_IN_FLIGHT (the same
// for the experiments in flight on other workers: no result yet, and an
// empty description while still being proposed) and RATCHET_GUIDANCE (outer
// loop guidance, one line each) in its environment. It edits the files in
// place and prints a one-line description of its change as its last line of
// output. A non-zero exit, the timeout, or a write to .git or .ratchet is a
// failed proposal (see core/state_guard.h). Its output is
// kept in .ratchet/runs/<id>/propose.log. Where a sandbox works, .git and
// .ratchet are read-only to it.
#pragma once

#include <memory>
#include <string>

#include "core/config_section.h"
#include "core/proposer.h"

namespace ratchet {

std::unique_ptr<Proposer> MakeScriptProposer(ConfigSection& section, const LoopConfig& config,
                                             const ProposerDeps& deps, std::string* err);

/// The last non-empty line of `output`, trimmed.
std::string LastLine(const std::string& output);

}  // namespace ratchet
