// What the engine tells the outside world as it goes: the terminal, and
// .ratchet/live.json for `ratchet status` and the dashboard.
#pragma once

#include <string>
#include <string_view>

#include "core/experiment.h"

namespace ratchet {

class Reporter {
 public:
  virtual ~Reporter() = default;
  /// A session (one `ratchet run`) began.
  virtual void OnSessionStart(int session_id) { (void)session_id; }
  /// The experiment entered a new phase (its row is already in the ledger).
  virtual void OnPhase(const Experiment& exp) { (void)exp; }
  /// A run started (attempt is 1-based; purpose "main", "confirm", ...).
  virtual void OnRunStart(const Experiment& exp, int attempt, const std::string& purpose) {
    (void)exp, (void)attempt, (void)purpose;
  }
  /// A `progress:` line printed by the run.
  virtual void OnProgress(const Experiment& exp, std::string_view line) { (void)exp, (void)line; }
  /// The experiment is done; `incumbent` is the best after it.
  virtual void OnFinished(const Experiment& exp, const Experiment* incumbent) {
    (void)exp, (void)incumbent;
  }
  /// Something the user should know (recovery, warnings).
  virtual void OnNote(const std::string& line) { (void)line; }
  /// The loop stopped.
  virtual void OnStop(const std::string& reason) { (void)reason; }
};

}  // namespace ratchet
