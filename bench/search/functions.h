// Standard test functions for the search benchmark, each with its search
// space, its known optimum and the noise added to every evaluation.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "propose/search/space.h"

namespace ratchet::bench {

struct TestFunction {
  std::string name;
  std::string kind;  // "continuous", "integer", "mixed", ...
  std::vector<ParamSpec> params;
  double optimum = 0;   // the lowest noise-free value
  double noise_sd = 0;  // sd of the Gaussian noise added to each evaluation
  /// The noise-free value at a point (choice parameters as indices), or
  /// nullopt where the function fails (an infeasible design).
  std::function<std::optional<double>(const Point&)> value;
};

/// The benchmark's functions, in table order.
std::vector<TestFunction> TestFunctions();

}  // namespace ratchet::bench
