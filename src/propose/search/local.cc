// Local search: Gaussian steps around the incumbent with a step size that
// adapts to success (the 1/5 rule: x2 after a new best, x2^-1/4 after a miss,
// so the step is steady when one step in five improves). With points in
// flight, each worker steps in its own direction: a step that lands within
// half the step of a pending point is redrawn.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "propose/search/algorithms.h"

namespace ratchet {

namespace {
constexpr double kInitialStep = 0.1, kMinStep = 0.005, kMaxStep = 0.5;
constexpr int kSpreadAttempts = 200;
}  // namespace

bool SuggestLocal(const SearchContext& ctx, const std::vector<Observation>& history,
                  const Point& center, Rng& rng, Point* out, std::string* method) {
  double step = kInitialStep;
  if (ctx.hints().step) {
    step = *ctx.hints().step;
  } else {
    // Replay the history: the step is a function of the results alone.
    double best = INFINITY;
    for (const Observation& o : history) {
      if (o.kind == Observation::Kind::kTried) continue;
      const bool improved = o.kind == Observation::Kind::kValue && o.value < best;
      if (improved && std::isfinite(best)) {
        step = std::min(kMaxStep, step * 2);
      } else if (!improved) {
        step = std::max(kMinStep, step * std::pow(2.0, -0.25));
      }
      if (improved) best = o.value;
    }
  }
  if (ctx.hints().exploration) step *= std::pow(4.0, *ctx.hints().exploration - 0.5);
  const size_t d = std::max<size_t>(ctx.free_dims().size(), 1);
  for (int attempt = 0; attempt < 400; ++attempt) {
    // Grow the step slowly when every nearby point is taken.
    const double s = std::min(1.0, step * std::pow(1.02, attempt));
    const Point p = ctx.Perturb(center, s, std::min(1.0, 2.0 / static_cast<double>(d) + 0.5), rng);
    // After many redraws, settle for any new point (a crowded small space).
    if (attempt < kSpreadAttempts && ctx.NearPending(p, 0.5 * s)) continue;
    if (ctx.Admissible(p)) {
      *out = p;
      char buf[48];
      std::snprintf(buf, sizeof buf, "local step %.3g", step);
      *method = buf;
      return true;
    }
  }
  return false;
}

}  // namespace ratchet
