// The tabu list: no proposal within a distance of recent points that failed
// or did not improve. With the search it gives the search tabu points
// ("avoid", "avoid_radius") before each proposal, and vetoes a candidate
// that lands within the radius anyway (a point forced by another mechanism,
// a rewrite); with an agent it lists the recent failed changes in the
// guidance and vetoes a candidate described exactly like one of them.
// The list is a function of the history alone.
#pragma once

#include "outer/builtin_context.h"
#include "outer/mechanism.h"

namespace ratchet {

struct TabuOptions {
  int tenure = 10;          // most recent discarded points that are tabu
  int failure_tenure = 30;  // most recent failed runs (crash, timeout, ...) that are tabu
  double radius = 0.05;     // on each parameter's unit scale
  bool veto = true;         // veto a candidate inside the radius
};

class TabuMechanism : public OuterMechanism {
 public:
  TabuMechanism(const BuiltinContext& context, const TabuOptions& options)
      : context_(context), options_(options) {}
  std::string name() const override { return "tabu"; }
  std::vector<Hook> hooks() const override;

  /// The tabu experiments for the loop in `view`, newest first.
  std::vector<const Experiment*> TabuList(const LoopView& view) const;

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;
  bool DoOnCandidate(const LoopView& view, const CandidateView& candidate,
                     CandidateVerdict* verdict) override;

 private:
  BuiltinContext context_;
  TabuOptions options_;
};

}  // namespace ratchet
