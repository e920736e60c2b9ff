#include "core/accept.h"

#include <algorithm>
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

Noise PooledNoise(const std::vector<std::vector<double>>& groups) {
  double sq = 0;
  Noise noise;
  for (const std::vector<double>& g : groups) {
    if (g.size() < 2) continue;
    Spread s = SpreadOf(g);
    sq += s.stddev * s.stddev * (s.n - 1);
    noise.dof += s.n - 1;
  }
  if (noise.dof > 0) noise.sigma = std::sqrt(sq / noise.dof);
  return noise;
}

namespace {

// The regularised incomplete beta function I_x(a, b), by its continued
// fraction (Numerical Recipes' betacf, in the form of Lentz's method).
double IncompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
               b * std::log(1 - x));
  if (x > (a + 1) / (a + b + 2)) return 1 - IncompleteBeta(b, a, 1 - x);
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  for (int m = 1; m <= 300; ++m) {
    for (int half = 0; half < 2; ++half) {
      double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                             : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (std::fabs(c) < tiny) c = tiny;
      f *= c * d;
    }
    if (std::fabs(c * d - 1) < 1e-12) break;
  }
  return front * f / a;
}

// P(T > t) for Student's t with `dof` degrees of freedom, t >= 0.
double StudentTail(double t, int dof) {
  const double v = dof;
  return 0.5 * IncompleteBeta(v / 2, 0.5, v / (v + t * t));
}

}  // namespace

double StudentCritical(double sigmas, int dof) {
  if (dof <= 0 || sigmas <= 0) return sigmas;
  if (dof > 1000) return sigmas;
  const double tail = 0.5 * std::erfc(sigmas / std::sqrt(2.0));
  double lo = sigmas, hi = sigmas;
  while (StudentTail(hi, dof) > tail) hi *= 2;
  for (int i = 0; i < 100; ++i) {
    double mid = (lo + hi) / 2;
    (StudentTail(mid, dof) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
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
    d.reason = (confirmed ? "mean of " + std::to_string(in.candidate.n) + " confirm runs " : "") +
               versus +
               (config.min_delta > 0 ? ", needs more than min_delta " +
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
    // Standard error of the difference of two means, with one noise level:
    // the pooled estimate, else the candidate's own spread, never below the
    // floor, nor below what rounding alone makes of equal runs.
    Noise noise = in.noise;
    if (noise.dof == 0 && in.candidate.n > 1) noise = {in.candidate.stddev, in.candidate.n - 1};
    const double rounding =
        1e-9 * std::max(std::fabs(in.candidate.mean), std::fabs(in.incumbent.mean));
    const double sigma = std::max({noise.sigma, config.noise_floor, rounding});
    const double se = sigma * std::sqrt(1.0 / std::max(1, in.candidate.n) +
                                        1.0 / std::max(1, in.incumbent.n));
    const double critical = StudentCritical(config.noise_sigmas, noise.dof);
    const double bar = critical * se;
    const std::string runs = "mean of " + std::to_string(in.candidate.n) + " confirm runs ";
    char tdesc[96];
    std::snprintf(tdesc, sizeof tdesc, "%.3g x std error %s (noise %s, %d dof)", critical,
                  FormatMetric(se).c_str(), FormatMetric(sigma).c_str(), noise.dof);
    if (!(improvement > bar)) {
      d.reason = runs + versus + " is within noise (needs more than " + FormatMetric(bar) +
                 " = " + tdesc + ")";
      return d;
    }
    d.keep = true;
    d.reason = runs + versus + ", beyond noise " + FormatMetric(bar) + " = " + tdesc;
    return d;
  }
  d.keep = true;
  d.reason = versus;
  return d;
}

}  // namespace ratchet
