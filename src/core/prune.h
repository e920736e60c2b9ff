// Pruning: stopping a run that is clearly losing before its budget is spent.
// At checkpoints (fractions of the budget, after a warm-up) a progress value
// of the running candidate is compared with reference curves at the same
// elapsed time (ratchet's clock):
//   median     the `percentile` of every earlier full-budget run's value there
//              (the median rule of Optuna / Vizier), from `min_runs` runs on;
//   incumbent  the current best's curve;
//   halving    successive halving: the best 1/eta of earlier runs there, so
//              each checkpoint is a rung only the top third (eta 3) pass.
// A run is worse at a checkpoint when it trails that reference by more than
// `sigmas` times the run-to-run noise of the curve there (the spread of
// repeated runs of one commit: baseline repeats, confirm runs) plus
// `margin`; without a noise measurement and without a margin it is never
// pruned. Worse at `patience` checkpoints in a row: pruned. Pure.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/curve.h"

namespace ratchet {

/// What pruning compares a run with: curves of finished runs.
struct PruneReference {
  const Curve* incumbent = nullptr;       // the best's (first) run, or null
  std::vector<const Curve*> completed;    // full-budget runs of earlier experiments
  /// Runs of one commit each (the baseline's repeats, confirm runs): their
  /// spread at a checkpoint is the noise of the curve there.
  std::vector<std::vector<const Curve*>> repeats;
};

class Pruner {
 public:
  /// `budget_s` > 0: checkpoints are at fractions of it.
  Pruner(const PruneConfig& config, double budget_s);

  /// Called after each new point of the candidate's curve; true when the
  /// run should stop now (reason() says why). Each checkpoint is judged
  /// once, when the curve first reaches it.
  bool Observe(const Curve& candidate, const PruneReference& reference);
  const std::string& reason() const { return reason_; }
  /// The fraction of the budget where the run was pruned (0 while not).
  double pruned_at() const { return pruned_at_; }
  /// Why a checkpoint could not be judged (no noise measured, too few
  /// runs), the last time one could not; "" when every one was.
  const std::string& unjudged() const { return unjudged_; }

  /// The noise of `key` at time t: pooled standard deviation of the groups.
  static bool NoiseAt(const std::vector<std::vector<const Curve*>>& groups, const std::string& key,
                      double t, double* sigma);

 private:
  /// The reference value at time t and its description, false when there is none.
  bool Threshold(const PruneReference& reference, double t, double* value, std::string* what);

  PruneConfig config_;
  double budget_s_;
  size_t next_ = 0;  // the next checkpoint to judge (index into config_.at)
  int worse_in_row_ = 0;
  std::string reason_, unjudged_;
  double pruned_at_ = 0;
};

}  // namespace ratchet
