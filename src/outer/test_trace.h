// Test helpers: traces of finished experiments, built one line at a time,
// and a small search space.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "propose/search/space.h"

namespace ratchet::testing {

class Trace {
 public:
  explicit Trace(Goal goal = Goal::kMin) { config.goal = goal; config.metric_name = "score"; }
  /// The baseline (a keep, without parameters).
  Trace& Baseline(double metric);
  /// An experiment proposed from the current incumbent.
  Trace& Add(Status status, std::optional<double> metric, const std::string& params_json = "",
             const std::string& description = "");  // "" = "change <id>"
  /// Adds an experiment: kept when it beats the incumbent, else discarded.
  Trace& Step(double metric, const std::string& params_json = "");
  /// The loop as the engine shows it before proposing the next experiment.
  LoopView View() const;
  const Experiment* Incumbent() const;

  LoopConfig config;
  std::vector<Experiment> history;
};

/// X and Y: floats in [0, 1]; N: int 0..10.
SearchSpace SmallSpace();
/// {"X": x, "Y": y, "N": n}
std::string P(double x, double y, int n = 5);

}  // namespace ratchet::testing
