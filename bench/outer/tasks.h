// The benchmark's tasks: landscapes where a plain local search gets stuck,
// each with its search space, its known optimum, the noise of a run, and a
// start point per seed (the values in the files before the loop starts).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "propose/search/space.h"

namespace ratchet::bench {

struct Task {
  std::string name;
  std::string stuck;  // why a plain local search gets stuck here
  std::vector<ParamSpec> params;
  double optimum = 0;   // the lowest noise-free value
  double noise_sd = 0;  // Gaussian noise added to every run
  /// The noise-free value, or nullopt where a run crashes.
  std::function<std::optional<double>(const Point&)> value;
  std::function<Point(uint64_t seed)> start;
};

std::vector<Task> Tasks();

}  // namespace ratchet::bench
