// Level 1.5: every `outer.every` experiments the outer loop looks at the
// trace statistics of the last window and adjusts how the inner loop
// searches, by fixed rules, each decision with its reason:
//   half the window crashed       -> smaller steps, less exploration
//   stuck (no new best for stuck_after experiments, proposals near the best)
//                                 -> more exploration, every parameter free
//   proposals repeat earlier ones -> more exploration
//   keeps come often (>= 40%)     -> less exploration (refine the best)
//   none of these                 -> back toward the search's own settings
//   a parameter changed >= 4 times without a keep while others kept
//                                 -> frozen until the loop is stuck
// The tuner is also a mechanism: before each proposal it gives the current
// settings as search hints ("exploration", "step", "frozen") and as a line of
// guidance for an agent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "outer/builtin_context.h"
#include "outer/mechanism.h"
#include "outer/trace_stats.h"

namespace ratchet {

struct TunerSettings {
  std::optional<double> exploration;  // unset: the search's own
  std::optional<double> step;         // unset: the search's own
  std::vector<std::string> frozen;    // parameter names
  std::string text;                   // guidance for an agent ("" for none)
  bool operator==(const TunerSettings&) const = default;
};

struct TunerDecision {
  bool changed = false;
  std::string change;  // "exploration 0.5 -> 0.75; frozen DEPTH", or "no change"
  std::string reason;  // the rule and the numbers behind it
  TunerSettings settings;
};

class TunerMechanism : public OuterMechanism {
 public:
  explicit TunerMechanism(const BuiltinContext& context) : context_(context) {}
  std::string name() const override { return "tuner"; }
  std::vector<Hook> hooks() const override { return {Hook::kBeforePropose}; }

  /// Applies the rules to the window's statistics of the loop in `view`; the
  /// new settings take effect from the next proposal. A search whose own
  /// proposals are spread out (SearchIsLocal false) is not stuck: it explores.
  TunerDecision Adjust(const TraceStats& window, const LoopView& view);
  const TunerSettings& settings() const { return settings_; }

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;

 private:
  BuiltinContext context_;
  TunerSettings settings_;
};

/// "exploration 0.5 -> 0.75; frozen DEPTH" (what changed), or "".
std::string DescribeChange(const TunerSettings& before, const TunerSettings& after);

/// The settings as JSON (for the ledger event).
std::string TunerSettingsJson(const TunerSettings& settings);

}  // namespace ratchet
