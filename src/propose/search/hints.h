// Search hints: how the outer loop steers the search proposer for one
// proposal. They arrive as a JSON object (ProposalRequest::search_hints_json,
// merged key by key from every mechanism's Guidance::search_hints_json).
// Every key is optional; an unknown key or a bad value fails the proposal
// with a message naming it, so a typo in a mechanism is seen at once.
//
//   {
//     "algorithm":   "local",     // this proposal only: auto | random | lhs | tpe | local | gp
//     "exploration": 0.2,         // 0 = stay near the incumbent .. 1 = spread over the region
//     "step":        0.05,        // local step, as a fraction of each parameter's range
//     "active":      ["MATRIX_LR", "DEPTH"],  // only these may change ...
//     "frozen":      ["N_EMBD"],              // ... and these keep the incumbent's value
//     "region": {                 // sample only inside (bounds are intersected with the space)
//       "MATRIX_LR": [0.01, 0.05],           // float/int: [low, high]
//       "ACT": ["gelu", "silu"]              // choice: the allowed values
//     },
//     "avoid": [{"MATRIX_LR": 0.04, "DEPTH": 4}],  // tabu points; a partial point
//                                                 // avoids every point matching it
//     "avoid_radius": 0.05,       // tabu distance, fraction of each range (default 0: exact)
//     "next": {"MATRIX_LR": 0.02} // the next point, forced; unnamed parameters keep the
//                                 // incumbent's value. Must be new and satisfy the constraints.
//   }
//
// What "exploration" does per algorithm: auto/gp draw that share of their
// candidates from the whole region (the rest around the best points) and
// widen the expected-improvement margin above 0.5; tpe widens its kernels;
// local scales its step by 4^(exploration - 0.5). random and lhs ignore it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "propose/search/space.h"

namespace ratchet {

struct SearchHints {
  std::string algorithm;              // "" = the configured one
  std::optional<double> exploration;  // [0, 1]
  std::optional<double> step;         // (0, 1]
  std::vector<bool> active;           // per parameter; empty = all active
  /// Per parameter: the region in value space (float/int), inclusive.
  std::vector<std::optional<std::pair<double, double>>> bounds;
  /// Per parameter: allowed choice indices (empty = all).
  std::vector<std::vector<bool>> allowed;
  /// Tabu points: per point, per parameter, the value or NaN (not named).
  std::vector<Point> avoid;
  double avoid_radius = 0;
  std::optional<Point> next;  // complete (filled from the incumbent)

  bool empty() const;
};

/// Parses `json` ("" = no hints) against `space`; `incumbent` fills the
/// parameters that "next" does not name. Errors start with "search hints: ".
bool ParseSearchHints(const std::string& json, const SearchSpace& space, const Point& incumbent,
                      SearchHints* out, std::string* err);

}  // namespace ratchet
