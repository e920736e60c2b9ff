#include "core/accept.h"

#include <cmath>
#include <cstdio>

namespace ratchet {

Spread SpreadOf(const std::vector<double>& values) {
  Spread s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / s.n;
  if (s.n > 1) {
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / (s.n - 1));
  }
  return s;
}

std::string FormatMetric(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

AcceptDecision DecideAccept(const AcceptInput& in, const LoopConfig& config, bool confirmed) {
  AcceptDecision d;
  const double improvement = config.goal == Goal::kMin ? in.incumbent.mean - in.candidate.mean
                                                       : in.candidate.mean - in.incumbent.mean;
  const std::string versus = FormatMetric(in.candidate.mean) + " vs " +
                             FormatMetric(in.incumbent.mean) + " (" +
                             (improvement >= 0 ? "better by " : "worse by ") +
                             FormatMetric(std::fabs(improvement)) + ")";
  if (!(improvement > config.min_delta)) {
    d.reason = versus + (config.min_delta > 0 ? ", needs more than min_delta " +
                                                    FormatMetric(config.min_delta)
                                              : "");
    return d;
  }
  if (config.confirm > 0 && !confirmed) {
    d.needs_confirmation = true;
    d.reason = versus + ", confirming with " + std::to_string(config.confirm) + " more runs";
    return d;
  }
  if (confirmed) {
    // Standard error of the difference of two means, with one noise level.
    double sigma = in.noise_sigma.value_or(in.candidate.stddev);
    double se = sigma * std::sqrt(1.0 / std::max(1, in.candidate.n) +
                                  1.0 / std::max(1, in.incumbent.n));
    double bar = config.noise_sigmas * se;
    if (!(improvement > bar)) {
      d.reason = "mean of " + std::to_string(in.candidate.n) + " runs " + versus +
                 " is within noise (needs more than " + FormatMetric(bar) + " = " +
                 FormatMetric(config.noise_sigmas) + " x std error " + FormatMetric(se) + ")";
      return d;
    }
    d.keep = true;
    d.reason = "mean of " + std::to_string(in.candidate.n) + " runs " + versus +
               ", beyond noise " + FormatMetric(bar);
    return d;
  }
  d.keep = true;
  d.reason = versus;
  return d;
}

}  // namespace ratchet
