// The JSON the page reads. Experiments are sent as columns (one array per
// field) and numbers are rounded for display, so the first load of a
// 10,000-experiment loop stays small and parses fast; /api/experiment/ID
// has full precision.
#pragma once

#include <string>

#include "web/loop_source.h"

namespace ratchet {

/// The rows part of /api/state: the members (no braces) "from", "total",
/// "n", "t0", "baseline_ids", "phases", "statuses", "metric_names" and
/// "cols" for the experiments with id >= from_id. cols: id; phase and status
/// as indexes into phases/statuses; metric (the primary); desc; start in
/// tenths of a second after t0 (null if not started); dur in seconds; cost
/// (absent when every cost is 0); metrics, one column per metric_names entry
/// (the primary metric is not repeated there). Depends on the ledger only,
/// so the server computes it once per change.
std::string StateRowsMembers(const LoopSettings& settings, const LedgerView& ledger, int from_id);

/// /api/state: settings, sessions, live status and the experiments with
/// id >= from_id (the page asks only for rows that may have changed).
/// `rows_members` is StateRowsMembers(settings, ledger, from_id) when the
/// caller has it already; "" computes it.
std::string StateJson(const LoopSettings& settings, const LedgerView& ledger, const LiveView& live,
                      long long version, int from_id, double now,
                      const std::string& rows_members = "");

/// The `live` object of /api/state and of the SSE `live` event; null when
/// there is no live.json.
std::string LiveJson(const LiveView& live);

/// /api/experiment/ID: every column of the row, its runs, diff and log tail.
std::string DetailJson(const ExperimentDetail& detail);

}  // namespace ratchet
