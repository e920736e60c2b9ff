// Learning curves: the progress lines a run prints (`progress: elapsed=12.3
// loss=2.41`, any keys), each stamped with ratchet's own clock (seconds since
// the run started), so that a run cannot move itself along the time axis.
// The values are the run's word; pruning (core/prune.h) uses them only to
// stop a run early, never to score one. Pure.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ratchet {

struct CurvePoint {
  double t = 0;  // seconds since the run started, by ratchet's clock
  std::map<std::string, double> values;  // every `key=number` of the line (NaN kept)
};
using Curve = std::vector<CurvePoint>;

/// Parses a progress line into *out (t set to `t`); false when `line` is
/// not a progress line or has no `key=number`.
bool ParseProgressLine(std::string_view line, double t, CurvePoint* out);

/// Appends `point`, keeping at most `max_points` (every other point is
/// dropped when full, the last one always kept), so that a run printing a
/// line per step cannot grow its ledger row without bound.
void AppendPoint(Curve* curve, CurvePoint point, size_t max_points = 512);

/// The value of `key` at time `t`: linear between the points around it (so
/// that curves printed at different moments compare at the same time), the
/// last value when `t` is past the last point; false before the first.
bool ValueAt(const Curve& curve, const std::string& key, double t, double* value);

}  // namespace ratchet
