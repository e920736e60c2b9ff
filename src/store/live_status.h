// .ratchet/live.json: what the loop is doing right now (see live_status.md).
// Written by `ratchet run`, read by `ratchet status` and the dashboard. A
// hint, not the ledger: whether `pid` is alive is for the reader to check.
#pragma once

#include <string>

namespace ratchet {

struct LiveStatus {
  long long pid = 0;
  int session_id = 0;
  int experiment_id = 0;        // 0 between experiments
  std::string phase;            // a PhaseName, or "stopped"
  double phase_started_at = 0;  // unix seconds
  double run_started_at = 0;    // 0 until the run starts
  double budget_s = 0;
  double timeout_s = 0;
  std::string progress;  // latest progress line, "" if none
  double updated_at = 0;
  std::string stop_reason;  // set when the loop has stopped
};

/// Replaces `path` atomically (temporary file in the same folder, then
/// rename): a reader sees the old or the new content, never a mix. Not
/// fsynced: it is rewritten often and a lost update only delays a viewer.
bool WriteLiveStatus(const std::string& path, const LiveStatus& live, std::string* err);

/// False with *err when the file is missing or malformed. Unknown keys are
/// ignored and missing ones keep their defaults, so old and new ratchets mix.
bool ReadLiveStatus(const std::string& path, LiveStatus* live, std::string* err);

/// The JSON text written by WriteLiveStatus (exposed for tests and the dashboard).
std::string LiveStatusJson(const LiveStatus& live);
bool ParseLiveStatus(const std::string& text, LiveStatus* live);

}  // namespace ratchet
