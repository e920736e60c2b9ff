#include "stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ratchet::bench {

Summary Summarize(const std::vector<double>& v) {
  Summary s;
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    s.sem = s.sd / std::sqrt(static_cast<double>(v.size()));
  }
  return s;
}

double WilcoxonSignedRankP(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double x = a[i] - b[i];
    // Differences below rounding noise count as ties at zero.
    if (std::fabs(x) > 1e-12 * (1 + std::fabs(a[i]) + std::fabs(b[i]))) d.push_back(x);
  }
  const size_t n = d.size();
  if (n == 0) return 1;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t i, size_t j) { return std::fabs(d[i]) < std::fabs(d[j]); });
  // Doubled ranks are integers even with ties (average ranks end in .5).
  std::vector<int> rank2(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && std::fabs(d[order[j + 1]]) == std::fabs(d[order[i]])) ++j;
    const int r2 = static_cast<int>(i + 1 + j + 1);  // 2 * average of ranks i+1 .. j+1
    for (size_t k = i; k <= j; ++k) rank2[order[k]] = r2;
    i = j + 1;
  }
  int total = 0, observed = 0;
  for (size_t i = 0; i < n; ++i) {
    total += rank2[i];
    if (d[i] > 0) observed += rank2[i];
  }
  // The number of sign patterns giving each positive-rank sum.
  std::vector<double> ways(static_cast<size_t>(total) + 1, 0);
  ways[0] = 1;
  for (size_t i = 0; i < n; ++i)
    for (int s = total; s >= rank2[i]; --s) ways[s] += ways[s - rank2[i]];
  const double all = std::pow(2.0, static_cast<double>(n));
  const double dev = std::fabs(observed - total / 2.0);
  double tail = 0;
  for (int s = 0; s <= total; ++s)
    if (std::fabs(s - total / 2.0) >= dev - 1e-9) tail += ways[s];
  return std::min(1.0, tail / all);
}

}  // namespace ratchet::bench
