// Proposer kinds by name. Each proposer registers a factory here (see
// registry.cc, the one list of kinds); the engine creates the one named by
// [propose] kind. A new proposer plugs in without touching src/core.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/proposer.h"

namespace ratchet {

/// Builds a proposer from its [propose.<kind>] section (absent if the file
/// has none). Reads keys through `section` (unknown keys are then reported by
/// the caller's section.Finish()); returns null and fills *err on a bad value.
using ProposerFactory = std::function<std::unique_ptr<Proposer>(
    ConfigSection& section, const LoopConfig& config, const ProposerDeps& deps,
    std::string* err)>;

/// The kinds known to this build, e.g. {"agent", "script", "search"}.
std::vector<std::string> ProposerKinds();

/// Creates the proposer of `kind`, validating its section; null with *err
/// ("ratchet.toml:14:1: unknown proposer kind 'serch'; known: ...") otherwise.
std::unique_ptr<Proposer> CreateProposer(const std::string& kind, const LoopConfig& config,
                                         const ProposerDeps& deps, std::string* err);

/// Checks every [propose.<kind>] section in the file, not only the chosen one,
/// so a typo in an unused section is still reported. Factories may read the
/// loop's files through deps.workspace but must not change anything.
bool ValidateProposerSections(const LoopConfig& config, const ProposerDeps& deps,
                              std::string* err);

}  // namespace ratchet
