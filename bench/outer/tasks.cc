#include "tasks.h"

#include <algorithm>
#include <cmath>

#include "propose/search/rng.h"

namespace ratchet::bench {

namespace {

constexpr int kDims = 4;

std::vector<ParamSpec> UnitCube() {
  std::vector<ParamSpec> params;
  for (int i = 0; i < kDims; ++i) {
    ParamSpec p;
    p.name = "X" + std::to_string(i);
    p.file = "sim";
    p.low = 0;
    p.high = 1;
    params.push_back(p);
  }
  return params;
}

double Distance(const Point& x, const Point& c) {
  double d2 = 0;
  for (size_t i = 0; i < x.size(); ++i) d2 += (x[i] - c[i]) * (x[i] - c[i]);
  return std::sqrt(d2);
}

// A point near `center`: each coordinate within `spread`, inside [0, 1].
Point Near(const Point& center, double spread, uint64_t seed) {
  Rng rng(MixSeed(seed, 0x57a27));
  Point p = center;
  for (double& v : p) v = std::clamp(v + rng.Uniform(-spread, spread), 0.0, 1.0);
  for (double& v : p) v = std::round(v * 1e4) / 1e4;  // what 4 digits in a file hold
  return p;
}

struct Well {
  Point center;
  double depth;  // the well's floor is 1 - depth
  double width;
};

// The landscape is the lowest of the wells: 1 - depth * exp(-d^2 / 2w^2).
double Wells(const std::vector<Well>& wells, const Point& x) {
  double v = 1;
  for (const Well& w : wells) {
    const double d = Distance(x, w.center);
    v = std::min(v, 1 - w.depth * std::exp(-d * d / (2 * w.width * w.width)));
  }
  return v;
}

const std::vector<Well>& SomeWells() {
  static const std::vector<Well> wells = {
      {{0.2, 0.25, 0.3, 0.2}, 0.35, 0.14},  // where the loop starts: shallow
      {{0.75, 0.2, 0.7, 0.3}, 0.55, 0.12},  {{0.3, 0.8, 0.2, 0.7}, 0.6, 0.12},
      {{0.6, 0.6, 0.4, 0.8}, 0.7, 0.1},     {{0.15, 0.7, 0.75, 0.35}, 0.5, 0.12},
      {{0.85, 0.8, 0.8, 0.75}, 1.0, 0.09},  // the deepest, far from the start
      {{0.5, 0.35, 0.85, 0.6}, 0.65, 0.1},  {{0.8, 0.45, 0.15, 0.15}, 0.45, 0.13},
  };
  return wells;
}

}  // namespace

std::vector<Task> Tasks() {
  std::vector<Task> tasks;

  // A flat plateau around the start: no step changes the result, so every
  // proposal is discarded and local steps only shrink.
  {
    Task t;
    t.name = "plateau";
    t.stuck = "flat around the start: no local step improves";
    t.params = UnitCube();
    const Point c = {0.75, 0.75, 0.25, 0.75};
    t.value = [c](const Point& x) -> std::optional<double> {
      return std::min(1.0, Distance(x, c) / 0.45);
    };
    t.start = [](uint64_t seed) { return Near({0.2, 0.2, 0.75, 0.2}, 0.1, seed); };
    tasks.push_back(t);
  }

  // Deceptive: a broad bowl leads to a mediocre floor (0.4); the true
  // optimum is a narrow funnel on the far side, worse than the bowl's floor
  // over most of its extent.
  {
    Task t;
    t.name = "deceptive";
    t.stuck = "the broad basin at the start has a floor of 0.4; the optimum's funnel is narrow";
    t.params = UnitCube();
    const Point a = {0.3, 0.3, 0.3, 0.3}, b = {0.8, 0.85, 0.8, 0.75};
    t.value = [a, b](const Point& x) -> std::optional<double> {
      const double da = Distance(x, a), db = Distance(x, b);
      return std::min(0.4 + 1.2 * da * da, db / 0.4);
    };
    t.start = [a](uint64_t seed) { return Near(a, 0.2, seed); };
    tasks.push_back(t);
  }

  // Multi-modal: eight wells of different depths; the loop starts in a
  // shallow one.
  {
    Task t;
    t.name = "wells";
    t.stuck = "eight basins; local steps stay in the shallow one at the start";
    t.params = UnitCube();
    t.value = [](const Point& x) -> std::optional<double> { return Wells(SomeWells(), x); };
    t.start = [](uint64_t seed) { return Near(SomeWells()[0].center, 0.08, seed); };
    tasks.push_back(t);
  }

  // The same wells, measured with noise about the size of the differences
  // between neighbouring wells: lucky runs are kept and then never beaten.
  {
    Task t = tasks.back();
    t.name = "noisy-wells";
    t.stuck = "multi-modal, and a lucky run becomes an incumbent nothing beats";
    t.noise_sd = 0.05;
    tasks.push_back(t);
  }

  // The wells behind walls where a run crashes (say, out of memory): the
  // space is cut into quadrants of x0, x1; a step into a wall is a crash.
  {
    Task t = tasks[2];
    t.name = "crash-walls";
    t.stuck = "multi-modal, with crash walls between the start's quadrant and the rest";
    t.value = [](const Point& x) -> std::optional<double> {
      if (std::fabs(x[0] - 0.5) < 0.06 || std::fabs(x[1] - 0.5) < 0.06) return std::nullopt;
      return Wells(SomeWells(), x);
    };
    tasks.push_back(t);
  }
  return tasks;
}

}  // namespace ratchet::bench
