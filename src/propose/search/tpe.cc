// Multivariate tree-structured Parzen estimator. The results are split into
// the best few ("good") and the rest ("bad", failures and the points in
// flight included: a pending point is not worth drawing near twice); each group
// becomes a mixture with one product kernel per point plus a flat prior
// component. Candidates are drawn from the good mixture and the one with the
// highest good/bad density ratio wins.
#include <algorithm>
#include <cmath>
#include <limits>

#include "propose/search/algorithms.h"

namespace ratchet {

namespace {

constexpr double kInvSqrt2Pi = 0.3989422804014327;

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

struct Parzen {
  std::vector<std::vector<double>> centers;  // encoded points
  std::vector<double> sigma;                 // per parameter (unit coordinates)
  double prior_weight = 1;                   // weight of the flat component
};

// log density of x under the mixture; free parameters only.
double LogDensity(const SearchContext& ctx, const Parzen& p, const std::vector<double>& x) {
  const std::vector<size_t>& dims = ctx.free_dims();
  const double total = static_cast<double>(p.centers.size()) + p.prior_weight;
  // The flat component: uniform over the region.
  double log_prior = std::log(p.prior_weight / total);
  for (size_t i : dims) {
    if (ctx.IsChoice(i)) {
      size_t allowed = 0;
      for (size_t k = 0; k < ctx.space().Levels(i); ++k) allowed += ctx.Allowed(i, k) ? 1 : 0;
      log_prior -= std::log(static_cast<double>(std::max<size_t>(allowed, 1)));
    } else {
      log_prior -= std::log(std::max(ctx.hi(i) - ctx.lo(i), 1e-9));
    }
  }
  std::vector<double> terms{log_prior};
  for (const std::vector<double>& c : p.centers) {
    double lp = std::log(1.0 / total);
    for (size_t i : dims) {
      if (ctx.IsChoice(i)) {
        // Half the mass on the center's category, half spread over all.
        const double k = static_cast<double>(ctx.space().Levels(i));
        lp += std::log((x[i] == c[i] ? 0.5 : 0.0) + 0.5 / k);
      } else {
        const double s = p.sigma[i];
        const double z = (x[i] - c[i]) / s;
        const double mass = NormalCdf((ctx.hi(i) - c[i]) / s) - NormalCdf((ctx.lo(i) - c[i]) / s);
        lp += std::log(kInvSqrt2Pi / s) - 0.5 * z * z - std::log(std::max(mass, 1e-12));
      }
    }
    terms.push_back(lp);
  }
  const double m = *std::max_element(terms.begin(), terms.end());
  double sum = 0;
  for (double t : terms) sum += std::exp(t - m);
  return m + std::log(sum);
}

Parzen Build(const SearchContext& ctx, const std::vector<std::vector<double>>& centers,
             double width) {
  Parzen p;
  p.centers = centers;
  p.sigma.assign(ctx.dims(), 1);
  const double n = static_cast<double>(centers.size());
  const double d = static_cast<double>(std::max<size_t>(ctx.free_dims().size(), 1));
  // A fifth of the range, shrinking with the number of points as Scott's
  // rule does for a product kernel; widened or narrowed by the hints.
  const double factor = 0.2 * width * std::pow(n + 1, -1.0 / (d + 4));
  for (size_t i : ctx.free_dims()) {
    const double range = std::max(ctx.hi(i) - ctx.lo(i), 1e-9);
    p.sigma[i] = std::clamp(factor * range, 0.01 * range, range);
  }
  return p;
}

// The chance that x fails: failures against all results near x, with the
// bad group's kernel widths, pulled towards the overall failure rate.
double FailureChance(const SearchContext& ctx, const Parzen& widths,
                     const std::vector<std::vector<double>>& failures,
                     const std::vector<std::vector<double>>& all, const std::vector<double>& x) {
  if (failures.empty()) return 0;
  auto kernel = [&](const std::vector<double>& o) {
    double log_k = 0;
    for (size_t i : ctx.free_dims()) {
      if (ctx.IsChoice(i)) {
        log_k += x[i] == o[i] ? 0 : std::log(0.3);
      } else {
        const double z = (x[i] - o[i]) / widths.sigma[i];
        log_k -= 0.5 * z * z;
      }
    }
    return std::exp(log_k);
  };
  double near_failures = 0, near_all = 0;
  for (const auto& f : failures) near_failures += kernel(f);
  for (const auto& o : all) near_all += kernel(o);
  const double prior = static_cast<double>(failures.size()) / static_cast<double>(all.size());
  return (near_failures + prior) / (near_all + 1);
}

}  // namespace

bool SuggestTpe(const SearchContext& ctx, const std::vector<Observation>& history, Rng& rng,
                Point* out) {
  std::vector<const Observation*> values, failures;
  SplitObservations(history, &values, &failures);
  if (values.size() < 2) return false;
  std::stable_sort(values.begin(), values.end(),
                   [](const Observation* a, const Observation* b) { return a->value < b->value; });
  const size_t n_good = std::clamp<size_t>(
      static_cast<size_t>(std::ceil(0.15 * static_cast<double>(values.size()))), 1, 25);
  std::vector<std::vector<double>> good, bad;
  for (size_t k = 0; k < values.size(); ++k) {
    (k < n_good ? good : bad).push_back(ctx.Encode(values[k]->point));
  }
  std::vector<std::vector<double>> failed, all = good;
  all.insert(all.end(), bad.begin(), bad.end());
  for (const Observation* f : failures) {
    failed.push_back(ctx.Encode(f->point));
    bad.push_back(failed.back());
    all.push_back(failed.back());
  }
  // Not in `all`: a pending point has no outcome for the failure chance.
  for (const Point& q : ctx.pending()) bad.push_back(ctx.Encode(q));
  const double width = std::pow(2.0, 2 * ctx.exploration(0.5) - 1);
  const Parzen l = Build(ctx, good, width);
  const Parzen g = Build(ctx, bad, width);

  double best_score = -std::numeric_limits<double>::infinity();
  bool found = false;
  const int kCandidates = 64;
  for (int round = 0; round < 8 && !found; ++round) {
    for (int c = 0; c < kCandidates; ++c) {
      // Draw from the good mixture: a component, then each parameter.
      const int comp = rng.Below(static_cast<int>(good.size()) + 1);
      std::vector<double> x = ctx.Encode(ctx.anchor());
      for (size_t i : ctx.free_dims()) {
        const size_t levels = ctx.space().Levels(i);
        if (ctx.IsChoice(i)) {
          if (comp < static_cast<int>(good.size()) && rng.Uniform() < 0.5) {
            x[i] = good[comp][i];
          } else {
            x[i] = static_cast<double>(rng.Below(static_cast<int>(levels)));
          }
        } else if (comp == static_cast<int>(good.size())) {
          x[i] = rng.Uniform(ctx.lo(i), ctx.hi(i));
        } else {
          double u;
          int tries = 0;
          do {
            u = good[comp][i] + l.sigma[i] * rng.Normal();
          } while ((u < ctx.lo(i) || u > ctx.hi(i)) && ++tries < 32);
          x[i] = std::clamp(u, ctx.lo(i), ctx.hi(i));
        }
      }
      const Point p = ctx.Decode(x);
      if (!ctx.Admissible(p)) continue;
      const std::vector<double> e = ctx.Encode(p);
      const double p_fail = FailureChance(ctx, g, failed, all, e);
      const double score =
          LogDensity(ctx, l, e) - LogDensity(ctx, g, e) + 2 * std::log(std::max(1 - p_fail, 1e-9));
      if (score > best_score) {
        best_score = score;
        *out = p;
        found = true;
      }
    }
  }
  return found;
}

}  // namespace ratchet
