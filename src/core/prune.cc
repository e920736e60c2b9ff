#include "core/prune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ratchet {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string Percent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
  return buf;
}

}  // namespace

Pruner::Pruner(const PruneConfig& config, double budget_s) : config_(config), budget_s_(budget_s) {}

bool Pruner::NoiseAt(const std::vector<std::vector<const Curve*>>& groups, const std::string& key,
                     double t, double* sigma) {
  double squares = 0;
  int dof = 0;
  for (const std::vector<const Curve*>& group : groups) {
    std::vector<double> values;
    for (const Curve* curve : group) {
      double v = 0;
      if (curve && ValueAt(*curve, key, t, &v) && std::isfinite(v)) values.push_back(v);
    }
    if (values.size() < 2) continue;
    double mean = 0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    for (double v : values) squares += (v - mean) * (v - mean);
    dof += static_cast<int>(values.size()) - 1;
  }
  if (dof == 0) return false;
  *sigma = std::sqrt(squares / dof);
  return true;
}

bool Pruner::Threshold(const PruneReference& reference, double t, double* value,
                       std::string* what) {
  const std::string& key = config_.value;
  if (config_.rule == "incumbent") {
    if (!reference.incumbent || !ValueAt(*reference.incumbent, key, t, value) ||
        !std::isfinite(*value)) {
      unjudged_ = "the current best has no " + key + " at that time";
      return false;
    }
    *what = "the current best's " + Number(*value);
    return true;
  }
  std::vector<double> values;
  for (const Curve* curve : reference.completed) {
    double v = 0;
    if (curve && ValueAt(*curve, key, t, &v) && std::isfinite(v)) values.push_back(v);
  }
  if (static_cast<int>(values.size()) < config_.min_runs) {
    unjudged_ = "only " + std::to_string(values.size()) + " earlier runs have " + key +
                " at that time (min_runs " + std::to_string(config_.min_runs) + ")";
    return false;
  }
  // Best first, in the value's own direction.
  std::sort(values.begin(), values.end(),
            [&](double a, double b) { return config_.Better(a, b); });
  const double n = static_cast<double>(values.size());
  size_t index;
  if (config_.rule == "halving") {
    index = static_cast<size_t>(std::max(1.0, std::ceil(n / config_.eta))) - 1;
    *what = "the best 1/" + Number(config_.eta) + " of " + std::to_string(values.size()) +
            " earlier runs (" + Number(values[index]) + ")";
  } else {
    index = static_cast<size_t>(std::lround((config_.percentile / 100) * (n - 1)));
    *what = (config_.percentile == 50 ? std::string("the median") :
                                        "the " + Number(config_.percentile) + "th percentile") +
            " of " + std::to_string(values.size()) + " earlier runs (" + Number(values[index]) + ")";
  }
  *value = values[index];
  return true;
}

bool Pruner::Observe(const Curve& candidate, const PruneReference& reference) {
  if (!reason_.empty()) return true;
  if (!config_.enabled() || budget_s_ <= 0 || candidate.empty()) return false;
  const double now = candidate.back().t;
  while (next_ < config_.at.size() && config_.at[next_] * budget_s_ <= now) {
    const double fraction = config_.at[next_++];
    if (fraction < config_.warmup) continue;
    const double t = fraction * budget_s_;
    double mine = 0;
    if (!ValueAt(candidate, config_.value, t, &mine)) {
      unjudged_ = "the run printed no " + config_.value + " by " + Percent(fraction);
      continue;
    }
    double reference_value = 0, noise = 0;
    std::string what;
    if (!Threshold(reference, t, &reference_value, &what)) continue;
    const bool measured = NoiseAt(reference.repeats, config_.value, t, &noise);
    if (!measured && config_.margin <= 0) {
      unjudged_ = "no run-to-run noise of " + config_.value +
                  " is measured yet (repeat the baseline, or set [prune] margin)";
      continue;
    }
    const double bar = config_.sigmas * (measured ? noise : 0) + config_.margin;
    // NaN is worse than anything.
    const bool worse = !std::isfinite(mine) || config_.Better(reference_value, mine, bar);
    worse_in_row_ = worse ? worse_in_row_ + 1 : 0;
    if (worse_in_row_ < config_.patience) continue;
    pruned_at_ = fraction;
    reason_ = config_.value + " " + Number(mine) + " at " + Percent(fraction) +
              " of the budget trails " + what + " by more than " + Number(bar) +
              (measured ? " (" + Number(config_.sigmas) + " x noise " + Number(noise) +
                              (config_.margin > 0 ? " + margin " + Number(config_.margin) : "") + ")"
                        : " (margin)");
    if (config_.patience > 1)
      reason_ += ", at " + std::to_string(worse_in_row_) + " checkpoints in a row";
    return true;
  }
  return false;
}

}  // namespace ratchet
