// Events the user adds to a loop's ledger from outside `ratchet run`
// (`ratchet note`, `pause`, `resume`): a second SQLite writer beside a
// running loop, which WAL and the ledger's busy timeout make safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/loop_dir.h"
#include "core/ledger.h"

namespace ratchet {

/// Appends an event of `kind` with `detail_json` at the current time,
/// attached to the latest experiment (so `ratchet log` shows it after that
/// one). *at gets its time. The loop must have a ledger.
bool AddUserEvent(const LoopPaths& paths, const std::string& kind, const std::string& detail_json,
                  double* at, std::string* err);

/// Every event of the loop, read-only.
bool LoadAllEvents(const LoopPaths& paths, std::vector<LedgerEvent>* events, std::string* err);

}  // namespace ratchet
