// The acceptance rule: does a candidate beat the incumbent? Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace ratchet {

/// Mean and sample standard deviation (0 for fewer than two values).
struct Spread {
  double mean = 0;
  double stddev = 0;
  int n = 0;
};
Spread SpreadOf(const std::vector<double>& values);

/// Run-to-run noise: the standard deviation of one run, pooled over groups
/// of repeated runs of one commit (the baseline's repeats, each confirmed
/// candidate's confirmation runs), with its degrees of freedom.
struct Noise {
  double sigma = 0;
  int dof = 0;  // sum over groups of (runs - 1); 0: no estimate
};
Noise PooledNoise(const std::vector<std::vector<double>>& groups);

/// The one-sided critical value of Student's t with `dof` degrees of freedom
/// at the tail probability a standard normal has beyond `sigmas` (so for
/// many degrees of freedom it tends to `sigmas`; with few it is wider, as an
/// estimate from two or three runs is often too small).
double StudentCritical(double sigmas, int dof);

struct AcceptInput {
  /// The candidate's runs that decide: the selection run before
  /// confirmation, the confirmation runs alone after it (the run that made
  /// it look good is not counted again: no winner's curse).
  Spread candidate;
  Spread incumbent;  // the runs that decided the incumbent
  Noise noise;
};

struct AcceptDecision {
  bool keep = false;
  /// The candidate looks better on its selection run and confirm runs are
  /// configured: run them, then decide again on them alone.
  bool needs_confirmation = false;
  std::string reason;  // one line, with the numbers
};

/// The default rule. A candidate must improve on the incumbent's mean by
/// more than min_delta. With confirm runs, after them, the improvement of
/// their mean must also beat StudentCritical(noise_sigmas, dof) standard
/// errors of the difference of means, the noise pooled from every repeated
/// run and never below noise_floor (nor below rounding).
AcceptDecision DecideAccept(const AcceptInput& input, const LoopConfig& config, bool confirmed);

/// Formats a metric value for messages (6 significant digits).
std::string FormatMetric(double value);

}  // namespace ratchet
