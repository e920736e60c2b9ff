#include "propose/search/context.h"

#include <algorithm>
#include <cmath>

namespace ratchet {

SearchContext::SearchContext(const SearchSpace& space, const SearchHints& hints,
                             const Point& anchor, const std::vector<Observation>& history,
                             const std::vector<Point>& pending)
    : space_(space), hints_(hints), anchor_(anchor), pending_(pending) {
  const size_t n = space.size();
  free_mask_.assign(n, true);
  lo_.assign(n, 0);
  hi_.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    if (!hints.active.empty() && !hints.active[i]) free_mask_[i] = false;
    if (free_mask_[i]) free_.push_back(i);
    if (!hints.bounds.empty() && hints.bounds[i] && !space.IsChoice(i)) {
      lo_[i] = space.ToUnit(i, hints.bounds[i]->first);
      hi_[i] = space.ToUnit(i, hints.bounds[i]->second);
    }
  }
  for (const Observation& o : history) tried_.insert(o.point);
  pending_set_.insert(pending.begin(), pending.end());
}

bool SearchContext::NearPending(const Point& point, double radius) const {
  for (const Point& q : pending_) {
    if (q.size() != point.size()) continue;
    double d2 = 0;
    bool same_choices = true;
    for (size_t i = 0; i < point.size() && same_choices; ++i) {
      if (IsChoice(i)) {
        same_choices = point[i] == q[i];
      } else {
        const double d = space_.ToUnit(i, point[i]) - space_.ToUnit(i, q[i]);
        d2 += d * d;
      }
    }
    if (same_choices && d2 <= radius * radius) return true;
  }
  return false;
}

bool SearchContext::Allowed(size_t i, size_t k) const {
  if (hints_.allowed.empty() || hints_.allowed[i].empty()) return true;
  return hints_.allowed[i][k];
}

double SearchContext::exploration(double fallback) const {
  return hints_.exploration ? *hints_.exploration : fallback;
}

std::vector<double> SearchContext::Encode(const Point& point) const {
  std::vector<double> x(point.size());
  for (size_t i = 0; i < point.size(); ++i) {
    x[i] = IsChoice(i) ? point[i] : space_.ToUnit(i, point[i]);
  }
  return x;
}

Point SearchContext::Decode(const std::vector<double>& x) const {
  Point p(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!free_mask_[i]) {
      p[i] = anchor_[i];
      continue;
    }
    if (IsChoice(i)) {
      p[i] = space_.Snap(i, x[i]);
      continue;
    }
    p[i] = space_.FromUnit(i, std::clamp(x[i], lo_[i], hi_[i]));
    if (!hints_.bounds.empty() && hints_.bounds[i]) {
      // Snapping may step just outside the hinted region: step back in.
      const auto [blo, bhi] = *hints_.bounds[i];
      if (p[i] < blo || p[i] > bhi) {
        const size_t levels = space_.Levels(i);
        for (size_t k = 0; k < levels; ++k) {
          const size_t kk = p[i] < blo ? k : levels - 1 - k;
          const double v = space_.IntLevel(i, kk);
          if (v >= blo && v <= bhi) {
            p[i] = v;
            break;
          }
        }
      }
    }
  }
  return p;
}

bool SearchContext::Admissible(const Point& point) const {
  if (!space_.Contains(point) || tried_.count(point) || pending_set_.count(point)) return false;
  for (size_t i = 0; i < point.size(); ++i) {
    if (!free_mask_[i] && point[i] != anchor_[i]) return false;
    if (IsChoice(i)) {
      if (!Allowed(i, static_cast<size_t>(point[i]))) return false;
    } else if (!hints_.bounds.empty() && hints_.bounds[i]) {
      if (point[i] < hints_.bounds[i]->first || point[i] > hints_.bounds[i]->second) return false;
    }
  }
  for (const Point& tabu : hints_.avoid) {
    bool match = true;
    for (size_t i = 0; i < point.size() && match; ++i) {
      if (std::isnan(tabu[i])) continue;
      if (IsChoice(i) || hints_.avoid_radius == 0) {
        match = point[i] == tabu[i];
      } else {
        match = std::fabs(space_.ToUnit(i, point[i]) - space_.ToUnit(i, tabu[i])) <=
                hints_.avoid_radius;
      }
    }
    if (match) return false;
  }
  return space_.Feasible(point);
}

Point SearchContext::RandomPoint(Rng& rng) const {
  Point p = anchor_;
  for (size_t i : free_) {
    const ParamSpec& spec = space_.param(i);
    if (spec.type == ParamSpec::Type::kFloat) {
      p[i] = space_.FromUnit(i, rng.Uniform(lo_[i], hi_[i]));
      continue;
    }
    // Discrete: uniform over the allowed values.
    std::vector<double> values;
    for (size_t k = 0; k < space_.Levels(i); ++k) {
      if (IsChoice(i)) {
        if (Allowed(i, k)) values.push_back(static_cast<double>(k));
      } else {
        const double v = space_.IntLevel(i, k);
        const double u = space_.ToUnit(i, v);
        if (u >= lo_[i] - 1e-12 && u <= hi_[i] + 1e-12) values.push_back(v);
      }
    }
    p[i] = values.empty() ? anchor_[i] : values[rng.Below(static_cast<int>(values.size()))];
  }
  return p;
}

Point SearchContext::Perturb(const Point& center, double step, double dim_prob, Rng& rng) const {
  Point p = center;
  if (free_.empty()) return p;
  const size_t forced = free_[rng.Below(static_cast<int>(free_.size()))];
  for (size_t i : free_) {
    if (i != forced && rng.Uniform() >= dim_prob) continue;
    if (IsChoice(i)) {
      std::vector<size_t> others;
      for (size_t k = 0; k < space_.Levels(i); ++k) {
        if (static_cast<double>(k) != center[i] && Allowed(i, k)) others.push_back(k);
      }
      if (!others.empty())
        p[i] = static_cast<double>(others[rng.Below(static_cast<int>(others.size()))]);
      continue;
    }
    double u = space_.ToUnit(i, center[i]) + step * rng.Normal();
    // Reflect at the region's edges, so the edge is not over-sampled.
    const double lo = lo_[i], hi = hi_[i];
    for (int k = 0; k < 4 && (u < lo || u > hi); ++k) u = u < lo ? 2 * lo - u : 2 * hi - u;
    u = std::clamp(u, lo, hi);
    std::vector<double> x = Encode(p);
    x[i] = u;
    p[i] = Decode(x)[i];
    if (p[i] == center[i] && space_.param(i).type == ParamSpec::Type::kInt) {
      // A small step on an int rounds back to where it was: move one level.
      const double dir = (u >= space_.ToUnit(i, center[i])) ? 1 : -1;
      const size_t levels = space_.Levels(i);
      for (size_t k = 0; k < levels; ++k) {
        if (space_.IntLevel(i, k) == center[i]) {
          const long next = static_cast<long>(k) + static_cast<long>(dir);
          if (next >= 0 && next < static_cast<long>(levels)) {
            p[i] = space_.IntLevel(i, static_cast<size_t>(next));
          }
          break;
        }
      }
    }
  }
  return p;
}

bool SearchContext::Enumerate(size_t limit, std::vector<Point>* out) const {
  std::vector<std::vector<double>> values(dims());
  size_t total = 1;
  for (size_t i = 0; i < dims(); ++i) {
    if (!free_mask_[i]) {
      values[i] = {anchor_[i]};
      continue;
    }
    if (space_.param(i).type == ParamSpec::Type::kFloat) return false;
    for (size_t k = 0; k < space_.Levels(i); ++k) {
      values[i].push_back(IsChoice(i) ? static_cast<double>(k) : space_.IntLevel(i, k));
    }
    total *= values[i].size();
    if (total > limit) return false;
  }
  out->clear();
  std::vector<size_t> index(dims(), 0);
  for (size_t c = 0; c < total; ++c) {
    Point p(dims());
    for (size_t i = 0; i < dims(); ++i) p[i] = values[i][index[i]];
    if (Admissible(p)) out->push_back(p);
    for (size_t i = 0; i < dims(); ++i) {
      if (++index[i] < values[i].size()) break;
      index[i] = 0;
    }
  }
  return true;
}

bool SearchContext::SampleAdmissible(Rng& rng, int tries, Point* out, bool* exhausted) const {
  *exhausted = false;
  for (int t = 0; t < tries; ++t) {
    Point p = RandomPoint(rng);
    if (Admissible(p)) {
      *out = p;
      return true;
    }
  }
  std::vector<Point> all;
  if (Enumerate(200000, &all)) {
    if (!all.empty()) {
      *out = all[rng.Below(static_cast<int>(all.size()))];
      return true;
    }
    *exhausted = true;
  }
  return false;
}

void SplitObservations(const std::vector<Observation>& history,
                       std::vector<const Observation*>* values,
                       std::vector<const Observation*>* failures) {
  for (const Observation& o : history) {
    if (o.kind == Observation::Kind::kValue) values->push_back(&o);
    if (o.kind == Observation::Kind::kFailed) failures->push_back(&o);
  }
}

}  // namespace ratchet
