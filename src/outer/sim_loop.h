// An in-process stand-in for the engine around the search proposer, with no
// git, files or processes: for the outer loop's benchmark and tests. Each
// experiment does what Engine::RunOne does with hooks and a search proposer:
// before_propose, the search's next point under the merged hints,
// on_candidate (veto or rewrite), the objective (a run), acceptance (the
// accept hook first, else "better than the incumbent"), on_result, then the
// outer controller, and the call counts are collected as the engine records
// them. The first experiment is the baseline at the start point.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "propose/search/optimizer.h"
#include "propose/search/space.h"

namespace ratchet {

/// A run: the metric at a point, or nullopt for a crash. `run` counts the
/// runs made so far (for noise streams).
using Objective = std::function<std::optional<double>(const Point& point, int run)>;

class SimLoop {
 public:
  /// `hooks` and `outer` may be null (the inner loop alone); `events` may be null.
  SimLoop(const SearchSpace* space, SearchOptions search, const LoopConfig& config,
          HookSet* hooks, OuterController* outer, EventSink* events);

  /// Runs experiments until `budget` experiments exist (baseline included).
  void Run(const Point& start, const Objective& objective, int budget);

  const std::vector<Experiment>& history() const { return history_; }
  /// The incumbent's point (the start point until something is kept).
  const Point& incumbent_point() const { return incumbent_point_; }
  /// Calls by (mechanism, hook), as the ledger's mechanism_calls table has them.
  const std::map<std::pair<std::string, std::string>, long long>& calls() const { return calls_; }

 private:
  LoopView View() const;
  void Finish(Experiment exp, const Point* point);

  const SearchSpace* space_;
  Optimizer optimizer_;
  LoopConfig config_;
  HookSet* hooks_;
  OuterController* outer_;
  EventSink* events_;
  std::vector<Experiment> history_;
  std::vector<Observation> observations_;
  Point incumbent_point_;
  std::map<std::pair<std::string, std::string>, long long> calls_;
  int runs_ = 0;
};

}  // namespace ratchet
