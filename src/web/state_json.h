// The JSON the page reads. Rows are sent as arrays under a `cols` header
// (not objects) and numbers are rounded for display, so the first load of a
// 10,000-experiment loop stays small; /api/experiment/ID has full precision.
#pragma once

#include <string>

#include "web/loop_source.h"

namespace ratchet {

/// /api/state: settings, sessions, live status and the experiments with
/// id >= from_id (the page asks only for rows that may have changed).
std::string StateJson(const LoopSettings& settings, const LedgerView& ledger,
                      const LiveView& live, long long version, int from_id, double now);

/// The `live` object of /api/state and of the SSE `live` event; null when
/// there is no live.json.
std::string LiveJson(const LiveView& live);

/// /api/experiment/ID: every column of the row, its runs, diff and log tail.
std::string DetailJson(const ExperimentDetail& detail);

}  // namespace ratchet
