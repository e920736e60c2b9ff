// The one list of proposer kinds. A new proposer adds a line here.
#include "propose/registry.h"

#include <map>

#include "propose/agent_proposer.h"
#include "propose/script_proposer.h"
#include "propose/search/search_proposer.h"

namespace ratchet {
namespace {

const std::map<std::string, ProposerFactory>& Factories() {
  static const std::map<std::string, ProposerFactory> factories = {
      {"agent", MakeAgentProposer},
      {"script", MakeScriptProposer},
      {"search", MakeSearchProposer},
  };
  return factories;
}

std::string KnownKinds() {
  std::string out;
  for (const std::string& kind : ProposerKinds()) out += (out.empty() ? "" : ", ") + kind;
  return out;
}

}  // namespace

std::vector<std::string> ProposerKinds() {
  std::vector<std::string> kinds;
  for (const auto& [kind, factory] : Factories()) kinds.push_back(kind);
  return kinds;
}

std::unique_ptr<Proposer> CreateProposer(const std::string& kind, const LoopConfig& config,
                                         const ProposerDeps& deps, std::string* err) {
  auto it = Factories().find(kind);
  if (it == Factories().end()) {
    *err = config.file + ": [propose] kind: unknown proposer '" + kind + "'; known: " +
           KnownKinds();
    return nullptr;
  }
  auto section_it = config.propose_sections.find(kind);
  ConfigSection section = section_it == config.propose_sections.end() ? ConfigSection()
                                                                      : section_it->second;
  std::unique_ptr<Proposer> proposer = it->second(section, config, deps, err);
  if (!proposer) return nullptr;
  if (!section.Finish(err)) return nullptr;
  return proposer;
}

bool ValidateProposerSections(const LoopConfig& config, const ProposerDeps& deps,
                              std::string* err) {
  for (const auto& [kind, section] : config.propose_sections) {
    if (kind == config.propose_kind) continue;  // CreateProposer checks it
    if (!Factories().count(kind)) {
      ConfigSection s = section;
      *err = s.Where() + ": [propose." + kind + "]: unknown proposer kind; known: " + KnownKinds();
      return false;
    }
    // Built only to read and check its keys.
    if (!CreateProposer(kind, config, deps, err)) return false;
  }
  return true;
}

}  // namespace ratchet
