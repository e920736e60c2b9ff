// The search algorithms behind one ask/tell API, with no files and no git,
// so benchmarks and tests run them in-process. A suggestion is a pure
// function of (space, options, history, pending, hints, incumbent, salt): the
// state is rebuilt from the history every time, so a resumed loop continues
// the same search and the same inputs always give the same point.
//
// Pending points are experiments in flight on other workers: proposed, not
// finished. None is ever proposed again (like a tried point), and each
// algorithm spreads away from them so that workers do not duplicate each
// other:
//   random  only the exact point is refused.
//   lhs     the design continues past them (a pending row is taken); the
//           initial design of auto/tpe/gp counts them as part of the design.
//   tpe     they join the "bad" group, so the density ratio falls near them.
//   local   steps that land near one (within half the step) are redrawn.
//   gp      they enter the model with a lie (SearchOptions::liar, by default
//           the model's own prediction there) using the hyperparameters
//           fitted on the real results, so the variance and with it the
//           expected improvement fall near them.
//
// Algorithms:
//   random  uniform over the (hinted) region.
//   lhs     Latin hypercube designs of `init` points, one design after another.
//   tpe     multivariate tree-structured Parzen estimator: the best ~15% of
//           the results against the rest (failures count with the rest).
//   local   Gaussian steps around the incumbent; the step grows after an
//           improvement and shrinks after a miss (the 1/5 success rule).
//   gp      Gaussian-process regression (Matern 5/2, per-parameter length
//           scales, a Hamming distance for choices) on log-compressed results
//           with expected improvement; a failure enters the model as the
//           worst result seen and the acquisition is weighted by the chance
//           of not failing.
//   auto    (default) a Latin hypercube initial design, then gp; tpe when the
//           gp cannot be fitted.
// Every algorithm: proposes only points inside the space that satisfy the
// constraints and the hints, and never a point already tried (a failed one
// included); points near failures are avoided by tpe, gp and auto.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "propose/search/hints.h"
#include "propose/search/space.h"

namespace ratchet {

enum class Algorithm { kAuto, kRandom, kLhs, kTpe, kLocal, kGp };
const char* AlgorithmName(Algorithm algorithm);
bool ParseAlgorithm(const std::string& name, Algorithm* out);

struct SearchOptions {
  Algorithm algorithm = Algorithm::kAuto;
  uint64_t seed = 0;
  /// Size of the initial design (auto, tpe, gp) and of each lhs design;
  /// 0 = from the number of parameters.
  int init = 0;
  /// The value a pending point enters the Gaussian process with, in the
  /// model's standardised scale: the best, the mean or the worst result seen,
  /// or the model's own prediction there (the "kriging believer"). The
  /// believer is the default: with 4 workers it lost the least against one
  /// worker on the search benchmark (bench/search/README.md, "Workers");
  /// the others are kept for that benchmark.
  enum class Liar { kBest, kMean, kWorst, kBeliever };
  Liar liar = Liar::kBeliever;
};
const char* LiarName(SearchOptions::Liar liar);
bool ParseLiar(const std::string& name, SearchOptions::Liar* out);

/// One tried point and what came of it. Values are minimised (the proposer
/// negates metrics for goal = "max").
struct Observation {
  enum class Kind {
    kValue,   // ran and has a value
    kFailed,  // crashed, timed out, failed a gate or broke a metric constraint
    kTried,   // tried without a result (vetoed, out of scope): never repeated
  };
  Point point;
  Kind kind = Kind::kValue;
  double value = 0;  // kValue
};

struct Suggestion {
  Point point;
  std::string method;  // "lhs 3/8", "gp", "tpe", "local step 0.12", "next (hint)"
};

class Optimizer {
 public:
  Optimizer(const SearchSpace* space, SearchOptions options);

  /// Picks the next point. `incumbent` is the loop's current best point (the
  /// values in the files), or null to use the best observed one; frozen
  /// parameters keep its values and local search steps from it. `salt`
  /// varies the random stream between rounds (the experiment id). Fails with
  /// kExhausted when every point has been tried (or is in flight), and with
  /// kInvalidArgument when the hints are bad or leave no room.
  /// `pending` are the points in flight on other workers (no result yet);
  /// their order is part of the input.
  Error Suggest(const std::vector<Observation>& history, const std::vector<Point>& pending,
                const SearchHints& hints, const Point* incumbent, uint64_t salt,
                Suggestion* out) const;
  /// The same with nothing in flight (one worker).
  Error Suggest(const std::vector<Observation>& history, const SearchHints& hints,
                const Point* incumbent, uint64_t salt, Suggestion* out) const {
    return Suggest(history, {}, hints, incumbent, salt, out);
  }

  /// The initial design size used for this space.
  int InitSize() const;
  const SearchOptions& options() const { return options_; }

 private:
  const SearchSpace* space_;
  SearchOptions options_;
};

/// Ask/tell convenience over Optimizer for in-process use (benchmarks). An
/// asked point is pending until it is told, so several may be in flight at
/// once (a simulation of many workers); each ask is salted with the number
/// of asks before it.
class Study {
 public:
  Study(const SearchSpace* space, SearchOptions options) : optimizer_(space, options) {}
  bool Ask(Point* point, std::string* err);
  /// How the last point was chosen ("gp", "lhs 3/8", ...).
  const std::string& last_method() const { return last_method_; }
  /// Records the result of a point (pending or not: it leaves the pending
  /// set); nullopt means the evaluation failed.
  void Tell(const Point& point, std::optional<double> value);
  const std::vector<Observation>& history() const { return history_; }
  /// Asked and not yet told, in the order they were asked.
  const std::vector<Point>& pending() const { return pending_; }
  /// The observation with the lowest value, or null if none has a value.
  const Observation* Best() const;

 private:
  Optimizer optimizer_;
  std::vector<Observation> history_;
  std::vector<Point> pending_;
  std::string last_method_;
};

}  // namespace ratchet
