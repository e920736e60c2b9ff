// What every search algorithm shares for one suggestion: the encoding of
// points for models (a float or int as its position in [0, 1] on its scale,
// a choice as its index), the region the hints allow, the points in flight,
// and the admissibility test (in the space, inside the hints, constraints
// hold, never tried, not pending, not tabu). Internal to the search library.
#pragma once

#include <set>
#include <vector>

#include "propose/search/hints.h"
#include "propose/search/optimizer.h"
#include "propose/search/rng.h"
#include "propose/search/space.h"

namespace ratchet {

class SearchContext {
 public:
  /// `anchor` gives the values of frozen parameters (the incumbent);
  /// `pending` the points in flight on other workers.
  SearchContext(const SearchSpace& space, const SearchHints& hints, const Point& anchor,
                const std::vector<Observation>& history, const std::vector<Point>& pending);

  const SearchSpace& space() const { return space_; }
  const SearchHints& hints() const { return hints_; }
  const Point& anchor() const { return anchor_; }
  size_t dims() const { return space_.size(); }
  bool IsChoice(size_t i) const { return space_.IsChoice(i); }
  /// Parameters that may change (not frozen by the hints).
  const std::vector<size_t>& free_dims() const { return free_; }
  bool IsFree(size_t i) const { return free_mask_[i]; }
  /// The region of a float/int parameter in unit coordinates.
  double lo(size_t i) const { return lo_[i]; }
  double hi(size_t i) const { return hi_[i]; }
  /// Whether choice k of parameter i is allowed by the hints.
  bool Allowed(size_t i, size_t k) const;
  /// The hinted exploration, or `fallback` when the hints give none.
  double exploration(double fallback = 0.5) const;

  std::vector<double> Encode(const Point& point) const;
  /// Snaps an encoded vector to a point (ints kept inside the region; frozen
  /// parameters set to the anchor's values).
  Point Decode(const std::vector<double>& x) const;

  bool Tried(const Point& point) const { return tried_.count(point) > 0; }
  /// The points in flight (no result yet), in the caller's order.
  const std::vector<Point>& pending() const { return pending_; }
  bool IsPending(const Point& point) const { return pending_set_.count(point) > 0; }
  /// Whether `point` lies within `radius` (unit coordinates, Euclidean over
  /// the float and int parameters) of a pending point with the same choices.
  bool NearPending(const Point& point, double radius) const;
  /// In the space and the region, constraints hold, new (neither tried nor
  /// pending), not tabu.
  bool Admissible(const Point& point) const;

  /// A uniform point of the region (ints and choices uniform over their
  /// allowed values); not checked for admissibility.
  Point RandomPoint(Rng& rng) const;
  /// A Gaussian step of `step` (unit coordinates) from `center` on each free
  /// parameter with probability `dim_prob` (at least one parameter changes);
  /// a choice changes with probability `dim_prob` to another allowed value.
  Point Perturb(const Point& center, double step, double dim_prob, Rng& rng) const;
  /// Draws uniform points until one is admissible (up to `tries`), then, for
  /// a small discrete space, picks among all admissible points. On failure
  /// *exhausted says whether every point was enumerated (all tried or
  /// excluded) rather than only missed by the draws.
  bool SampleAdmissible(Rng& rng, int tries, Point* out, bool* exhausted) const;
  /// Every admissible point when all free parameters are discrete and there
  /// are at most `limit` combinations; false otherwise.
  bool Enumerate(size_t limit, std::vector<Point>* out) const;

 private:
  const SearchSpace& space_;
  const SearchHints& hints_;
  Point anchor_;
  std::vector<size_t> free_;
  std::vector<bool> free_mask_;
  std::vector<double> lo_, hi_;
  std::set<Point> tried_;
  std::vector<Point> pending_;
  std::set<Point> pending_set_;
};

/// Fills `out` with the observations' values, and `failed` with failure
/// flags, for those of kind kValue / kFailed (kTried are skipped).
void SplitObservations(const std::vector<Observation>& history,
                       std::vector<const Observation*>* values,
                       std::vector<const Observation*>* failures);

}  // namespace ratchet
