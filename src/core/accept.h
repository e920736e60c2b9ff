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

struct AcceptInput {
  Spread candidate;  // over the candidate's runs so far
  Spread incumbent;  // over the incumbent's runs
  /// Run-to-run noise measured on the baseline repeats (stddev of one run);
  /// nullopt when the baseline ran once.
  std::optional<double> noise_sigma;
};

struct AcceptDecision {
  bool keep = false;
  /// The candidate looks better on its runs so far, and confirm runs are
  /// configured: run the confirm repeats, then decide again.
  bool needs_confirmation = false;
  std::string reason;  // one line, with the numbers
};

/// The default rule. A candidate must improve on the incumbent's mean by
/// more than min_delta. With confirm runs, after them, the mean improvement
/// must also beat noise_sigmas standard errors of the difference of means,
/// the noise taken from the baseline repeats (or from the runs themselves
/// when the baseline ran once).
AcceptDecision DecideAccept(const AcceptInput& input, const LoopConfig& config,
                            bool confirmed);

/// Formats a metric value for messages (6 significant digits).
std::string FormatMetric(double value);

}  // namespace ratchet
