// The loop's history as JSON, for proposers that hand it to another program
// (a script reads it from a file; an agent's prompt is built from it).
#pragma once

#include <string>
#include <vector>

#include "core/experiment.h"

namespace ratchet {

/// A JSON array, oldest first: one object per experiment with id, status,
/// reason, metric (null if none), metrics, description, params (object or
/// null), baseline, and commit (the candidate).
std::string HistoryJson(const std::vector<Experiment>& history);

}  // namespace ratchet
