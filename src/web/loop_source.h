// What the dashboard reads from a loop, behind one interface: the real
// LoopDirectory (loop_directory.h) reads the ledger read-only, live.json,
// ratchet.toml and git; server tests may use a scripted source.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/experiment.h"
#include "core/ledger.h"

namespace ratchet {

/// The loop's contract, as far as the page shows it (from ratchet.toml,
/// falling back to the ledger's meta table).
struct LoopSettings {
  std::string name;  // the loop directory's base name
  std::string metric_name;
  bool minimize = true;
  std::optional<double> target;
  double budget_s = 0;
  double timeout_s = 0;
  std::optional<int> max_experiments;
  std::optional<double> wall_s;
  std::optional<double> max_cost_usd;
  /// The progress value the detail's learning curve shows first: [prune]
  /// value when the loop prunes, else "" (the page picks one).
  std::string curve_key;
};

/// Everything in the ledger the page lists.
struct LedgerView {
  std::vector<Experiment> experiments;  // ordered by id
  std::vector<Session> sessions;        // ordered by id
};

/// .ratchet/live.json, plus whether its process is alive.
struct LiveView {
  bool present = false;  // false: no live.json
  long long pid = 0;
  bool alive = false;
  int session_id = 0;
  int experiment_id = 0;
  std::string phase;
  double phase_started_at = 0;
  double run_started_at = 0;
  double budget_s = 0;
  double timeout_s = 0;
  std::string progress;
  double updated_at = 0;
  std::string stop_reason;
};

/// What a click on one experiment shows besides its row.
struct ExperimentDetail {
  Experiment experiment;
  std::vector<RunRecord> runs;
  std::string diff;        // unified diff parent..candidate
  std::string diff_error;  // why there is no diff (e.g. the commit is gone)
  bool diff_truncated = false;
  /// The best it was proposed from (the keep whose commit is its parent)
  /// and the learning curve of that one's first full run, drawn beside its
  /// own; 0 and empty when there is none.
  int reference_id = 0;
  Curve reference_curve;
  std::string log;  // the tail of the main run log
  std::string log_error;
  bool log_truncated = false;
};

class LoopSource {
 public:
  virtual ~LoopSource() = default;
  virtual LoopSettings Settings() = 0;
  /// A cheap fingerprint of the ledger: when it differs from the last one,
  /// the ledger may have changed and LoadLedger is worth calling.
  virtual std::string LedgerStamp() = 0;
  virtual bool LoadLedger(LedgerView* out, std::string* err) = 0;
  /// The same for live.json.
  virtual std::string LiveStamp() = 0;
  virtual LiveView LoadLive() = 0;
  /// Runs, diff and log of `exp` (a row from LoadLedger). False with a
  /// message when its runs cannot be read.
  /// `reference`: the keep it was proposed from (see ExperimentDetail), or null.
  virtual bool LoadDetail(const Experiment& exp, const Experiment* reference,
                          ExperimentDetail* out, std::string* err) = 0;
};

}  // namespace ratchet
