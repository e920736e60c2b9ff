#include "core/experiment.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ratchet {
namespace {

constexpr std::array<std::pair<Phase, const char*>, 6> kPhases = {{
    {Phase::kProposing, "proposing"},
    {Phase::kCommitted, "committed"},
    {Phase::kBuilding, "building"},
    {Phase::kRunning, "running"},
    {Phase::kDecided, "decided"},
    {Phase::kDone, "done"},
}};

constexpr std::array<std::pair<Status, const char*>, 12> kStatuses = {{
    {Status::kNone, ""},
    {Status::kKeep, "keep"},
    {Status::kDiscard, "discard"},
    {Status::kCrash, "crash"},
    {Status::kTimeout, "timeout"},
    {Status::kOutOfScope, "out_of_scope"},
    {Status::kGateFailed, "gate_failed"},
    {Status::kPruned, "pruned"},
    {Status::kInterrupted, "interrupted"},
    {Status::kRejected, "rejected"},
    {Status::kNoChange, "no_change"},
    {Status::kProposeFailed, "propose_failed"},
}};

template <typename Enum, size_t N>
const char* NameOf(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename Enum, size_t N>
bool Parse(const std::array<std::pair<Enum, const char*>, N>& table, const std::string& name,
           Enum* out) {
  for (const auto& [v, n] : table) {
    if (name == n) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* PhaseName(Phase phase) { return NameOf(kPhases, phase); }
const char* StatusName(Status status) { return NameOf(kStatuses, status); }
bool ParsePhase(const std::string& name, Phase* phase) { return Parse(kPhases, name, phase); }
bool ParseStatus(const std::string& name, Status* status) {
  return Parse(kStatuses, name, status);
}

bool IsFailureStatus(Status status) {
  return status != Status::kKeep && status != Status::kDiscard &&
         status != Status::kInterrupted && status != Status::kNone;
}

const RunRecord* FirstFullRun(const std::vector<RunRecord>& runs) {
  for (const RunRecord& r : runs)
    if (r.attempt == 1) return &r;
  return nullptr;
}

bool Experiment::AddMechanisms(const std::vector<std::string>& names) {
  bool added = false;
  for (const std::string& name : names) {
    if (std::find(mechanisms.begin(), mechanisms.end(), name) != mechanisms.end()) continue;
    mechanisms.push_back(name);
    added = true;
  }
  return added;
}

}  // namespace ratchet
