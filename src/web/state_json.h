// The JSON the page reads. Experiments are sent as columns (one array per
// field) and numbers are rounded for display, so the first load of a
// 10,000-experiment loop stays small and parses fast; /api/experiment/ID
// has full precision.
#pragma once

#include <string>

#include "web/loop_source.h"

namespace ratchet {

/// The rows part of /api/state: the members (no braces) "from", "total",
/// "n", "phases", "statuses", "metric_names" and "cols" (id, phase and
/// status as indexes into phases/statuses, metric, desc, start, dur, cost,
/// baseline, and metrics: one column per metric name) for the experiments
/// with id >= from_id.
/// Depends on the ledger only, so the server computes it once per change.
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
