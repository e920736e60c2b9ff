// The real engine (core/engine.h) around the built-in search proposer, on
// the in-memory ports of core/testing: for the outer loop's benchmark and
// tests, with no git, files or processes. The search writes each point into
// the constants of a working copy (a map), the run step reads the point
// back from there and asks the objective, and the engine does everything
// else as `ratchet run` does: hooks, acceptance, the outer controller, the
// ledger. The first experiment is the baseline at the start point.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "core/testing/fakes.h"
#include "propose/search/optimizer.h"
#include "propose/search/space.h"

namespace ratchet {

class SearchProposer;

/// A run: the metric at a point, or nullopt for a crash. `run` counts the
/// runs made so far (for noise streams).
using Objective = std::function<std::optional<double>(const Point& point, int run)>;

class SimLoop {
 public:
  /// `hooks` and `outer` may be null (the inner loop alone); `events` may be
  /// null. Of `config`, the metric, goal and [accept] settings are used; the
  /// rest (files, command, stop rules) is the simulation's.
  SimLoop(const SearchSpace* space, SearchOptions search, const LoopConfig& config,
          HookSet* hooks, OuterController* outer, EventSink* events);
  ~SimLoop();

  /// Runs a session of the engine until `budget` experiments exist (the
  /// baseline included), or it stops earlier (a failed baseline). The
  /// ledger's new events then reach `events`. False with *err when the
  /// engine cannot run (a bug in the simulation, not an outcome).
  bool Run(const Point& start, const Objective& objective, int budget, std::string* err);

  /// The experiments in the ledger, by id.
  const std::vector<Experiment>& history() const { return ledger_.experiments; }
  /// The point in the branch's files (the start point until something is kept).
  const Point& incumbent_point() const { return incumbent_point_; }
  /// Calls by (mechanism, hook), from the ledger's mechanism_calls table.
  const std::map<std::pair<std::string, std::string>, long long>& calls() const {
    return ledger_.mechanism_calls;
  }

 private:
  /// The point the constants of `tree` hold.
  bool PointIn(const FileMap& tree, Point* point, std::string* err) const;
  /// The start tree: each parameter's constant in its file, at `start`.
  FileMap StartTree(const Point& start) const;
  RunResult RunStep(const RunSpec& spec, const Objective& objective);

  const SearchSpace* space_;
  SearchOptions search_;
  LoopConfig config_;
  HookSet* hooks_;
  OuterController* outer_;
  EventSink* events_;
  FakeClock clock_;
  FakeStepRunner steps_;
  FakeLedger ledger_;
  std::unique_ptr<FakeRepo> repo_;  // made with the start tree by the first Run
  std::unique_ptr<FakeWorkspace> workspace_;
  std::unique_ptr<SearchProposer> proposer_;
  Point incumbent_point_;
  size_t events_replayed_ = 0;
  int runs_ = 0;
};

}  // namespace ratchet
