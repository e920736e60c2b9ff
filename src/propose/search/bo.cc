// Model-based search with a Gaussian process: expected improvement over the
// best posterior mean, times the chance of not failing squared. Candidates
// come from the whole region and from steps around the best points; the best
// few are refined by a short local search on the acquisition. Points in
// flight enter the model with a lie (a constant liar or the kriging
// believer) after the fit, so the hyperparameters come from real results
// alone and the expected improvement falls where another worker already is.
#include <algorithm>
#include <cmath>
#include <limits>

#include "propose/search/algorithms.h"
#include "propose/search/gp.h"

namespace ratchet {

namespace {

constexpr double kLogInvSqrt2Pi = -0.9189385332046727;

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// log(phi(z) + z * Phi(z)), stable for very negative z.
double LogH(double z) {
  if (z > -6) {
    const double phi = std::exp(kLogInvSqrt2Pi - 0.5 * z * z);
    return std::log(std::max(phi + z * NormalCdf(z), 1e-300));
  }
  const double z2 = z * z;
  return kLogInvSqrt2Pi - 0.5 * z2 + std::log(1 / z2 - 3 / (z2 * z2) + 15 / (z2 * z2 * z2));
}

// Targets for the model: the distance above the best value, compressed by a
// log beyond the typical spread, then standardised. Near the best the scale
// stays linear; a diverging run does not flatten the rest of the landscape.
std::vector<double> CompressedScores(const std::vector<double>& y) {
  std::vector<double> sorted = y;
  std::sort(sorted.begin(), sorted.end());
  const double lo = sorted.front();
  const double mid = sorted[sorted.size() / 2];
  const double scale = mid > lo ? mid - lo : 1.0;
  std::vector<double> z(y.size());
  for (size_t i = 0; i < y.size(); ++i) z[i] = std::log1p((y[i] - lo) / scale);
  double mean = 0, var = 0;
  for (double v : z) mean += v;
  mean /= static_cast<double>(z.size());
  for (double v : z) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(z.size()));
  for (double& v : z) v = sd > 0 ? (v - mean) / sd : 0;
  return z;
}

struct Model {
  const SearchContext* ctx = nullptr;
  GaussianProcess gp;
  std::vector<std::vector<double>> successes;  // encoded
  std::vector<std::vector<double>> failures;   // encoded
  double fail_prior = 0;                       // smoothed failure rate
  double best = 0;                             // incumbent (lowest posterior mean)
  double margin = 0;                           // EI margin from the exploration hint

  // log of the acquisition: log EI + 2 log P(no failure).
  double Score(const Point& p) const {
    const std::vector<double> x = ctx->Encode(p);
    double mu, var;
    gp.Predict(x, &mu, &var);
    const double sd = std::sqrt(var);
    double score = std::log(sd) + LogH((best - margin - mu) / sd);
    if (!failures.empty()) {
      // The kernel-weighted failure rate around x, pulled towards the prior.
      double near_failures = 0, near_all = 0;
      for (const auto& f : failures) near_failures += gp.Correlation(x, f);
      near_all = near_failures;
      for (const auto& s : successes) near_all += gp.Correlation(x, s);
      const double p_fail = (near_failures + fail_prior) / (near_all + 1);
      score += 2 * std::log(std::max(1 - p_fail, 1e-9));
    }
    return score;
  }
};

// Bounds the cost of a long loop (the fit is cubic in the rows): the best
// results and the most recent ones carry what matters for the next point.
void TrimForCost(std::vector<const Observation*>* values,
                 std::vector<const Observation*>* failures) {
  constexpr size_t kMaxValues = 120, kMaxFailures = 100;
  if (values->size() > kMaxValues) {
    std::vector<size_t> order(values->size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return (*values)[a]->value < (*values)[b]->value; });
    std::vector<bool> keep(values->size(), false);
    for (size_t k = 0; k < kMaxValues / 2; ++k) keep[order[k]] = true;
    size_t kept = kMaxValues / 2;
    for (size_t k = values->size(); k-- > 0 && kept < kMaxValues;) {
      if (!keep[k]) {
        keep[k] = true;
        ++kept;
      }
    }
    std::vector<const Observation*> trimmed;
    for (size_t k = 0; k < values->size(); ++k) {
      if (keep[k]) trimmed.push_back((*values)[k]);
    }
    *values = std::move(trimmed);
  }
  if (failures->size() > kMaxFailures) {
    failures->erase(failures->begin(), failures->end() - kMaxFailures);
  }
}

}  // namespace

bool SuggestGp(const SearchContext& ctx, const std::vector<Observation>& history,
               SearchOptions::Liar liar, Rng& rng, Point* out) {
  std::vector<const Observation*> values, failures;
  SplitObservations(history, &values, &failures);
  if (values.size() < 3) return false;
  const double fail_prior =
      (static_cast<double>(failures.size()) + 1) / (static_cast<double>(history.size()) + 2);
  TrimForCost(&values, &failures);
  Model model;
  model.ctx = &ctx;
  std::vector<double> y;
  for (const Observation* o : values) {
    model.successes.push_back(ctx.Encode(o->point));
    y.push_back(o->value);
  }
  std::vector<double> z = CompressedScores(y);
  const double best_z = *std::min_element(z.begin(), z.end());
  // A failure enters the regression as the worst result seen, so the model
  // itself slopes away from a region that crashes (the chance of failing
  // below then keeps the search off its edge).
  std::vector<std::vector<double>> x = model.successes;
  const double worst = *std::max_element(z.begin(), z.end());
  for (const Observation* f : failures) {
    model.failures.push_back(ctx.Encode(f->point));
    x.push_back(model.failures.back());
    z.push_back(worst);
  }
  std::vector<bool> categorical(ctx.dims());
  for (size_t i = 0; i < ctx.dims(); ++i) categorical[i] = ctx.IsChoice(i);
  if (!model.gp.Fit(x, z, categorical)) return false;
  model.fail_prior = fail_prior;
  const double exploration = ctx.exploration(0.5);
  model.margin = std::max(0.0, exploration - 0.5);

  // The best few points by posterior mean: the incumbent and local centres.
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t k = 0; k < values.size(); ++k) {
    double mu, var;
    model.gp.Predict(model.successes[k], &mu, &var);
    ranked.emplace_back(mu, k);
  }
  std::sort(ranked.begin(), ranked.end());
  model.best = ranked[0].first;
  const size_t n_centres = std::min<size_t>(5, ranked.size());
  if (!ctx.pending().empty()) {
    std::vector<std::vector<double>> px;
    std::vector<double> lies;
    for (const Point& q : ctx.pending()) {
      px.push_back(ctx.Encode(q));
      double lie = 0;  // kMean: the results are standardised to mean 0
      if (liar == SearchOptions::Liar::kBest) lie = best_z;
      if (liar == SearchOptions::Liar::kWorst) lie = worst;
      if (liar == SearchOptions::Liar::kBeliever) {
        // The real results' model at q: conditioning on it keeps the mean
        // everywhere and only shrinks the variance around q.
        double var;
        model.gp.Predict(px.back(), &lie, &var);
      }
      lies.push_back(lie);
    }
    if (!model.gp.Condition(px, lies)) return false;
    // The incumbent is the best posterior mean over the points in flight
    // too: against the best real result alone, a pending point believed
    // better left a near-sure improvement just beside it, and the next
    // worker's proposal landed on top of it.
    for (const std::vector<double>& q : px) {
      double mu, var;
      model.gp.Predict(q, &mu, &var);
      model.best = std::min(model.best, mu);
    }
  }

  const int kCandidates = 1000;
  const int n_global = static_cast<int>(std::lround(kCandidates * exploration));
  const size_t d = std::max<size_t>(ctx.free_dims().size(), 1);
  std::vector<std::pair<double, Point>> scored;
  static const double kSteps[] = {0.01, 0.03, 0.1, 0.3};
  for (int c = 0; c < kCandidates; ++c) {
    Point p;
    if (c < n_global) {
      p = ctx.RandomPoint(rng);
    } else {
      const Point& centre = values[ranked[rng.Below(static_cast<int>(n_centres))].second]->point;
      const double dim_prob =
          rng.Uniform() < 0.5 ? 1.0 : std::min(1.0, 2.0 / static_cast<double>(d));
      p = ctx.Perturb(centre, kSteps[rng.Below(4)], dim_prob, rng);
    }
    if (!ctx.Admissible(p)) continue;
    scored.emplace_back(model.Score(p), p);
  }
  if (scored.empty()) return false;
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  // Refine the best few by hill climbing on the acquisition.
  std::pair<double, Point> best = scored[0];
  for (size_t k = 0; k < std::min<size_t>(5, scored.size()); ++k) {
    std::pair<double, Point> cur = scored[k];
    for (int step = 0; step < 30; ++step) {
      const double s = 0.05 * std::pow(0.1, step / 30.0);
      const Point p =
          ctx.Perturb(cur.second, s, std::min(1.0, 1.0 / static_cast<double>(d) + 0.3), rng);
      if (p == cur.second || !ctx.Admissible(p)) continue;
      const double score = model.Score(p);
      if (score > cur.first) cur = {score, p};
    }
    if (cur.first > best.first) best = cur;
  }
  *out = best.second;
  return true;
}

}  // namespace ratchet
