// A UCB1 bandit over ways of proposing: search step sizes, exploration
// strengths, one parameter at a time (families of change for the search), or
// kinds of change described in text (families for an agent). Before each
// proposal it picks the arm with the highest upper confidence bound (each
// untried arm first, in order) and gives its hints or text; the reward of an
// arm is 1 for a keep and 0 otherwise. With several workers, a pull whose
// experiment is still in flight counts in the arm's bound (not its mean), so
// proposals made at once spread over the arms. A proposal another mechanism already
// forced ("next") is left alone. The counts live in memory: a resumed loop
// starts the bandit afresh.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "outer/builtin_context.h"
#include "outer/mechanism.h"

namespace ratchet {

struct BanditArm {
  std::string label;            // "step 0.05", "only LR", ...
  nlohmann::json hints;         // merged into the search hints (an object, may be empty)
  std::string text;             // guidance text ("" for none)
  int pulls = 0;
  double reward = 0;            // summed
};

struct BanditOptions {
  /// "step", "exploration", "params" or "families".
  std::string over = "step";
  std::vector<double> steps = {0.02, 0.05, 0.1, 0.2, 0.4};
  std::vector<double> explorations = {0.0, 0.5, 1.0};
  std::vector<std::string> families;  // "families": one arm per text
  double c = 0.5;                     // weight of the confidence bound
};

class BanditMechanism : public OuterMechanism {
 public:
  /// False with *err when the arms cannot be made (no families, "params"
  /// without a search space, an unknown `over`).
  static bool Create(const BuiltinContext& context, const BanditOptions& options,
                     std::unique_ptr<BanditMechanism>* out, std::string* err);

  std::string name() const override { return "bandit"; }
  std::vector<Hook> hooks() const override { return {Hook::kBeforePropose, Hook::kOnResult}; }
  const std::vector<BanditArm>& arms() const { return arms_; }
  /// The arm UCB1 picks now, counting the pulls in flight.
  size_t Choose() const;

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;
  void DoOnResult(const LoopView& view, const Experiment& result) override;

 private:
  BanditMechanism(std::vector<BanditArm> arms, double c) : arms_(std::move(arms)), c_(c) {}
  std::vector<BanditArm> arms_;
  double c_;
  std::map<int, size_t> pending_;  // experiment id -> arm
};

}  // namespace ratchet
