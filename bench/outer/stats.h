// Paired comparisons for the benchmark.
#pragma once

#include <vector>

namespace ratchet::bench {

struct Summary {
  double mean = 0;
  double sd = 0;   // sample standard deviation
  double sem = 0;  // standard error of the mean
};
Summary Summarize(const std::vector<double>& values);

/// Two-sided Wilcoxon signed-rank test of the paired differences a[i] - b[i]
/// (zero differences dropped, tied magnitudes given their average rank),
/// with the exact distribution of the rank sum. 1 when all differences are 0.
double WilcoxonSignedRankP(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace ratchet::bench
