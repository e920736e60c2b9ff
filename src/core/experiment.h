// The experiment record: one row of the ledger, and the statuses and phases
// an experiment moves through. Plain data, shared by every layer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/curve.h"

namespace ratchet {

/// Where an experiment is in its life. Each transition is written to the
/// ledger before the side effect that follows it (write-ahead), so a crash
/// at any point is recovered from the last phase recorded.
enum class Phase {
  kProposing,  // row exists; the proposer may be editing the tree
  kCommitted,  // candidate committed as refs/ratchet/tried/<id>
  kBuilding,   // run.build and the "before" gates
  kRunning,    // the experiment command (and confirm repeats), with its verification
  kDecided,    // status is final; branch move or revert may still be pending
  kDone,       // side effects finished; the tree is at the incumbent
};

/// What happened to an experiment. A status is a fact, never a guess.
enum class Status {
  kNone,           // not decided yet (phase < kDecided)
  kKeep,           // improved on the incumbent; the branch advanced
  kDiscard,        // ran fine, did not improve enough (or broke a constraint)
  kCrash,          // build failed, non-zero exit, or no usable metric
  kTimeout,        // killed at run.timeout
  kOutOfScope,     // changed a file outside edit.files or a protected file
  kGateFailed,     // a gate command failed
  kPruned,         // stopped early by a pruning rule
  kInterrupted,    // ratchet was stopped (Ctrl-C twice, kill -9) mid-experiment
  kRejected,       // vetoed before running (reviewer or outer-loop mechanism)
  kNoChange,       // the proposer left the tree unchanged
  kProposeFailed,  // the proposer failed (non-zero exit, timeout)
};

const char* PhaseName(Phase phase);
const char* StatusName(Status status);
/// Parses a name written by PhaseName/StatusName; false if unknown.
bool ParsePhase(const std::string& name, Phase* phase);
bool ParseStatus(const std::string& name, Status* status);
/// The proposer of an experiment that `ratchet rerun` asked for: another
/// experiment's change, run in full (no preflight, no pruning).
inline constexpr char kRerunByHand[] = "rerun";

/// True for statuses that count as a failure of the proposer/candidate in a
/// row (the circuit breaker): everything except keep, discard and interrupted.
bool IsFailureStatus(Status status);

/// Token and money spent by a proposer on one experiment (coding agents).
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  bool empty() const { return input_tokens == 0 && output_tokens == 0 && cost_usd == 0; }
};

/// One run of the experiment command. An experiment has one, or more when the
/// baseline is repeated or a would-be keep is confirmed.
struct RunRecord {
  int experiment_id = 0;
  int attempt = 1;            // 1-based; 0 is the preflight (a smoke run, not a measurement)
  std::string purpose;        // "main", "baseline_repeat", "confirm", "rerun" or "preflight"
  int exit_code = -1;
  int signal = 0;             // death by signal, 0 if none
  bool timed_out = false;
  double wall_s = 0;
  double cpu_s = 0;
  double peak_rss_mb = 0;
  std::optional<double> metric;       // the primary metric, if finite
  /// Every metric: from the verifier's output when the loop has [verify],
  /// else from the run's; plus run.wall_s, run.cpu_s and run.peak_mem_mb,
  /// measured by ratchet.
  std::map<std::string, double> metrics;
  /// With [verify]: what the run printed about itself (never a score).
  std::map<std::string, double> claims;
  std::string containment;    // how the run was held: "cgroup", "pid namespace", ...
  bool sandboxed = false;
  double verify_s = 0;        // wall seconds of the verification
  std::string log_path;       // relative to the loop directory
  /// The progress lines it printed, stamped with ratchet's clock.
  Curve curve;
};

struct Experiment {
  int id = 0;                 // 1-based, contiguous, assigned by the ledger; 1 is the baseline
  int session_id = 0;
  Phase phase = Phase::kProposing;
  Status status = Status::kNone;
  std::string reason;         // one human line: why this status
  bool baseline = false;
  std::string parent_commit;  // the incumbent it was proposed from
  /// What the branch holds for it when kept; otherwise what ran.
  std::string candidate_commit;
  /// What ran, when it differs from candidate_commit (a winner rebased onto
  /// an incumbent that moved while it ran); "" otherwise.
  std::string tried_commit;
  std::string proposer;       // proposer kind, e.g. "script", "search", kRerunByHand
  std::string description;    // one line
  std::string hypothesis;
  std::string params_json;    // parameter values chosen (search), "" if none
  std::optional<double> metric;   // primary metric: mean over its runs
  double metric_stddev = 0;   // spread over its runs (0 when one run)
  int metric_n = 0;           // number of runs averaged
  std::map<std::string, double> metrics;  // all metrics (means over runs)
  std::map<std::string, double> claims;   // with [verify]: what the run printed, means
  double started_at = 0;      // unix seconds
  double finished_at = 0;
  double propose_s = 0, build_s = 0, run_s = 0;  // wall seconds per phase
  double cpu_s = 0;
  double peak_rss_mb = 0;
  int exit_code = -1;
  int signal = 0;
  std::string diff_stat;      // e.g. "1 file, +3 -1"
  std::vector<std::string> files_changed;
  std::string log_path;       // main run log, relative to the loop directory
  Usage usage;
  std::vector<std::string> mechanisms;  // outer-loop mechanisms that touched it
  /// Facts the user must know that are not its status: "ran without the
  /// sandbox", "the agent reported no usage while stop.cost_usd is set", ...
  std::vector<std::string> warnings;
  int worker = 0;             // the worker slot it ran in (0-based)

  /// Adds to `mechanisms` the names not there yet (a mechanism touches an
  /// experiment once, whichever hooks it ran); true if any was new.
  bool AddMechanisms(const std::vector<std::string>& names);
};

/// True for an experiment `ratchet rerun` asked for (proposer kRerunByHand):
/// it is run in full, with no preflight and no pruning, in any session.
inline bool RunInFull(const Experiment& e) { return e.proposer == kRerunByHand; }

/// The first full run of an experiment (attempt 1) among `runs`, or null:
/// its curve is the one the pruner and `ratchet show` compare.
const RunRecord* FirstFullRun(const std::vector<RunRecord>& runs);

}  // namespace ratchet
