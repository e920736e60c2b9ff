#include "outer/tuner.h"

#include <gtest/gtest.h>

#include "outer/search_points.h"
#include "outer/test_trace.h"

namespace ratchet {
namespace {

using testing::P;
using testing::Trace;

TEST(Tuner, StuckMeansMoreExplorationAndTheHintsSaySo) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  ctx.schedule.stuck_after = 5;
  TunerMechanism tuner(ctx);
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5));
  for (int i = 0; i < 5; ++i) t.Step(9.5, P(0.5 + 0.01 * (i + 1), 0.5));
  const TunerDecision d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.change, "exploration default -> 0.75");
  EXPECT_NE(d.reason.find("no improvement in the last 5"), std::string::npos) << d.reason;
  Guidance g;
  tuner.BeforePropose(t.View(), &g);
  EXPECT_EQ(GetHint(g, "exploration"), 0.75);
  // Still stuck: further, up to 1.
  tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  EXPECT_EQ(tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View()).settings.exploration, 1.0);
}

TEST(Tuner, ASearchThatSpreadsItsProposalsIsNotStuck) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  ctx.schedule.stuck_after = 5;
  TunerMechanism tuner(ctx);
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5));
  for (double x : {0.1, 0.9, 0.2, 0.8, 0.05}) t.Step(9.5, P(x, 1 - x));
  const TunerDecision d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  EXPECT_FALSE(d.changed) << d.reason;
  EXPECT_NE(d.reason.find("steady"), std::string::npos) << d.reason;
}

TEST(Tuner, CrashesMeanSmallerSteps) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  TunerMechanism tuner(ctx);
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5)).Add(Status::kCrash, std::nullopt, P(0.9, 0.5));
  t.Step(8, P(0.4, 0.5)).Add(Status::kCrash, std::nullopt, P(0.1, 0.5));
  const TunerDecision d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 4), t.View());
  EXPECT_EQ(*d.settings.step, 0.05);
  EXPECT_EQ(*d.settings.exploration, 0.25);
  EXPECT_NE(d.reason.find("50% of the last 4 experiments crashed"), std::string::npos) << d.reason;
}

TEST(Tuner, FrequentKeepsMeanLessExplorationAndSteadyMeansNoChange) {
  BuiltinContext ctx;  // an agent: guidance text only
  TunerMechanism tuner(ctx);
  Trace t;
  t.Baseline(10).Step(9).Step(8).Step(8.5).Step(7);
  TunerDecision d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 4), t.View());
  EXPECT_EQ(*d.settings.exploration, 0.25);
  EXPECT_NE(d.reason.find("75% of the last 4 experiments were kept"), std::string::npos);
  Guidance g;
  tuner.BeforePropose(t.View(), &g);
  ASSERT_EQ(g.text.size(), 1u);
  EXPECT_NE(g.text[0].find("refine the current best"), std::string::npos);
  EXPECT_TRUE(g.search_hints_json.empty());

  t.Step(7.5).Step(6).Step(6.5).Step(6.6).Step(6.7);  // 1 keep in 5
  // Nothing calls for a setting now: back to the search's own, then no change.
  d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  EXPECT_EQ(d.change, "exploration 0.25 -> default");
  EXPECT_NE(d.reason.find("steady: 20% kept"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("back toward the search's own settings"), std::string::npos);
  EXPECT_TRUE(d.settings.text.empty());
  d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.change, "no change");
}

TEST(Tuner, FreezesAParameterThatNeverHelpsWhileOthersDo) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  TunerMechanism tuner(ctx);
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5, 5));
  for (int n : {1, 2, 3, 4}) t.Step(9.5, P(0.5, 0.5, n));  // N: four misses
  t.Step(8, P(0.6, 0.5, 5));                               // X: a keep
  const TunerDecision d = tuner.Adjust(ComputeTraceStats(t.history, Goal::kMin, 5), t.View());
  ASSERT_EQ(d.settings.frozen, std::vector<std::string>{"N"}) << d.reason;
  EXPECT_NE(d.reason.find("freeze N"), std::string::npos) << d.reason;
  Guidance g;
  tuner.BeforePropose(t.View(), &g);
  EXPECT_EQ(GetHint(g, "frozen").dump(), R"(["N"])");
}

}  // namespace
}  // namespace ratchet
