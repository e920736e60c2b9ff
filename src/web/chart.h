// The progress chart: which experiments are drawn where. BuildChartModel is
// pure (ledger rows in, marks out); DrawChart lays the model out on a
// Painter. The dashboard page (assets/app.js) draws the same chart with the
// same rules in the browser; keep the two in step.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/experiment.h"
#include "web/painter.h"

namespace ratchet {

struct ChartOptions {
  std::string metric_name = "metric";
  bool minimize = true;
  std::optional<double> target;
  std::string title;  // "" -> "<metric> by experiment"
};

/// An experiment with a usable metric.
struct ChartMark {
  int id = 0;
  double value = 0;
  bool kept = false;     // status keep, or the baseline
  bool clipped = false;  // outside the y range; drawn at its edge
  std::string status;
  std::string description;
};

/// An experiment without a usable metric (crash, timeout, ...): drawn in a
/// band under the axis, never as a value.
struct ChartFailure {
  int id = 0;
  std::string status;
  std::string description;
};

struct ChartModel {
  ChartOptions options;
  std::vector<ChartMark> marks;
  std::vector<ChartFailure> failures;
  /// The incumbent (running best) after each keep: (experiment id, value).
  std::vector<std::pair<int, double>> best;
  int x_min = 1, x_max = 1;
  double y_lo = 0, y_hi = 1;  // the visible metric range
  size_t points() const { return marks.size() + failures.size(); }
};

/// True when an experiment is drawn as a value: decided with a metric and a
/// status that ran to the end (keep, discard, gate_failed, pruned).
bool HasChartValue(const Experiment& exp);

/// Marks, failures and the running best for every decided experiment.
/// Undecided experiments are left out. The y range covers the kept values,
/// the target and the bulk of the others; far outliers are clipped.
ChartModel BuildChartModel(const std::vector<Experiment>& experiments, const ChartOptions& options);

/// "Nice" tick values (steps of 1, 2 or 5 times a power of ten) in [lo, hi].
std::vector<double> NiceTicks(double lo, double hi, int target_count);

/// Draws the whole chart (axes, points, running best, target, labels of kept
/// experiments, crash band, legend) in a width x height box.
void DrawChart(const ChartModel& model, double width, double height, Painter* painter);

}  // namespace ratchet
