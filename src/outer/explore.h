// The two mechanisms for a stuck loop, each acting in its slot of the
// stagnation schedule (builtin_context.h):
//
// explore: a Latin hypercube design over the whole (hinted) region, one row
//   per experiment (forced with the "next" hint), so a stuck local search
//   sees the rest of the space; for an agent, guidance to make a bold change
//   unlike those tried so far.
// restart: steps from an elite point other than the incumbent (the best
//   result at least `min_distance` away from it, on the unit scale of some
//   parameter), so a second basin found by exploration is searched too; for
//   an agent, guidance to start again from that experiment's change.
//
// Both skip a proposal another mechanism already forced, and act only in
// their slot, so what they do is a function of the history.
#pragma once

#include "outer/builtin_context.h"
#include "outer/mechanism.h"

namespace ratchet {

class ExploreMechanism : public OuterMechanism {
 public:
  explicit ExploreMechanism(const BuiltinContext& context) : context_(context) {}
  std::string name() const override { return "explore"; }
  std::vector<Hook> hooks() const override { return {Hook::kBeforePropose}; }

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;

 private:
  BuiltinContext context_;
};

struct RestartOptions {
  double min_distance = 0.25;  // how far from the incumbent an elite must be
  double step = 0.05;          // Gaussian step from the elite, unit scale
};

class RestartMechanism : public OuterMechanism {
 public:
  RestartMechanism(const BuiltinContext& context, const RestartOptions& options)
      : context_(context), options_(options) {}
  std::string name() const override { return "restart"; }
  std::vector<Hook> hooks() const override { return {Hook::kBeforePropose}; }

  /// The elite experiment for the loop in `view`, or null.
  const Experiment* Elite(const LoopView& view) const;

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;

 private:
  BuiltinContext context_;
  RestartOptions options_;
};

}  // namespace ratchet
