// Trace statistics: what the outer loop knows about how the inner loop is
// searching. Computed from the finished experiments alone, so a resumed loop
// sees the same numbers as the session that wrote them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"

namespace ratchet {

/// What came of changing one parameter (search) or one kind of change
/// (agents: the set of files changed).
struct ChangeStats {
  int tried = 0;     // experiments that changed it and reached a decision
  int keeps = 0;
  int failures = 0;  // crash, timeout, gate_failed, pruned
  double gain = 0;   // summed improvement of the kept ones, in metric units (>= 0)
};

struct TraceStats {
  int experiments = 0;  // finished experiments, baseline included
  int window = 0;       // experiments in the window (the last N, baseline excluded)
  // Rates over the window (0 when it is empty).
  double keep_rate = 0;
  double crash_rate = 0;    // crash and timeout
  double failure_rate = 0;  // every failure status (IsFailureStatus)
  /// How much better the incumbent got over the window, per experiment, in
  /// metric units toward the goal (0 or more).
  double improvement_per_experiment = 0;
  /// Share of the window's proposals that repeat a point or change tried
  /// before (same parameters; or, without parameters, the same description).
  double repeat_rate = 0;
  /// Experiments since the incumbent last improved (the baseline counts as
  /// an improvement); 0 right after a keep.
  int since_best = 0;
  std::optional<double> start;  // the baseline's metric
  std::optional<double> best;   // the incumbent's metric
  int best_id = 0;
  /// By parameter name (experiments whose parent's parameters are known).
  std::map<std::string, ChangeStats> params;
  /// By kind of change: the files changed, joined with ",".
  std::map<std::string, ChangeStats> families;
};

/// `window`: how many recent experiments the rates look at (at least 1).
TraceStats ComputeTraceStats(const std::vector<Experiment>& history, Goal goal, int window);

/// A JSON object for ledger events and prompts; params and families only
/// when `details`.
std::string TraceStatsJson(const TraceStats& stats, bool details);

/// Improvement of `value` over `reference` toward the goal (positive = better).
inline double Gain(Goal goal, double reference, double value) {
  return goal == Goal::kMin ? reference - value : value - reference;
}

/// True for a status that ran and failed (crash, timeout, gate, pruned):
/// what tabu lists and crash rates count.
bool IsRunFailure(Status status);

}  // namespace ratchet
