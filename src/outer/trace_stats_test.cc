#include "outer/trace_stats.h"

#include <gtest/gtest.h>

#include "outer/test_trace.h"

namespace ratchet {
namespace {

using testing::P;
using testing::Trace;

TEST(TraceStats, RatesOverTheWindow) {
  Trace t;
  t.Baseline(10).Step(9).Add(Status::kCrash, std::nullopt).Step(9.5).Step(8).Add(
      Status::kTimeout, std::nullopt);
  const TraceStats s = ComputeTraceStats(t.history, Goal::kMin, 4);
  EXPECT_EQ(s.experiments, 6);
  EXPECT_EQ(s.window, 4);  // #3..#6
  EXPECT_DOUBLE_EQ(s.keep_rate, 0.25);
  EXPECT_DOUBLE_EQ(s.crash_rate, 0.5);
  EXPECT_DOUBLE_EQ(s.failure_rate, 0.5);
  EXPECT_EQ(s.since_best, 1);
  EXPECT_EQ(*s.best, 8);
  EXPECT_EQ(*s.start, 10);
  EXPECT_EQ(s.best_id, 5);
  // Best 9 before the window, 8 after: 1 over 4 experiments.
  EXPECT_DOUBLE_EQ(s.improvement_per_experiment, 0.25);
}

TEST(TraceStats, AWindowOverEverythingCountsFromTheBaseline) {
  Trace t;
  t.Baseline(10).Step(7).Step(8);
  const TraceStats s = ComputeTraceStats(t.history, Goal::kMin, 100);
  EXPECT_EQ(s.window, 2);
  EXPECT_DOUBLE_EQ(s.improvement_per_experiment, 1.5);
}

TEST(TraceStats, GoalMaxCountsImprovementUpward) {
  Trace t(Goal::kMax);
  t.Baseline(1).Step(3).Step(2);
  const TraceStats s = ComputeTraceStats(t.history, Goal::kMax, 2);
  EXPECT_EQ(*s.best, 3);
  EXPECT_EQ(s.since_best, 1);
  EXPECT_DOUBLE_EQ(s.improvement_per_experiment, 1.0);
}

TEST(TraceStats, RepeatsAreProposalsSeenBefore) {
  Trace t;
  t.Baseline(10)
      .Step(11, P(0.1, 0.2))
      .Step(12, P(0.3, 0.2))
      .Step(11, P(0.1, 0.2))  // a point tried before
      .Add(Status::kDiscard, 12, "", "raise the lr")
      .Add(Status::kDiscard, 12, "", "Raise the LR");  // the same change, said again
  const TraceStats s = ComputeTraceStats(t.history, Goal::kMin, 5);
  EXPECT_DOUBLE_EQ(s.repeat_rate, 2.0 / 5);
}

TEST(TraceStats, ParametersChangedAndWhatCameOfIt) {
  Trace t;
  t.Baseline(10)
      .Step(9, P(0.5, 0.5))   // parent is the baseline: no known parameters, not counted
      .Step(8, P(0.6, 0.5))   // X changed, kept: gain 1
      .Step(9, P(0.6, 0.7))   // Y changed, discarded
      .Add(Status::kCrash, std::nullopt, P(0.6, 0.9))  // Y changed, crashed
      .Step(7, P(0.7, 0.8));  // X and Y changed, kept: gain 1
  const TraceStats s = ComputeTraceStats(t.history, Goal::kMin, 10);
  ASSERT_EQ(s.params.count("X"), 1u);
  EXPECT_EQ(s.params.at("X").tried, 2);
  EXPECT_EQ(s.params.at("X").keeps, 2);
  EXPECT_DOUBLE_EQ(s.params.at("X").gain, 2);
  EXPECT_EQ(s.params.at("Y").tried, 3);
  EXPECT_EQ(s.params.at("Y").keeps, 1);
  EXPECT_EQ(s.params.at("Y").failures, 1);
  EXPECT_EQ(s.params.count("N"), 0u);  // never changed
  EXPECT_EQ(s.families.at("train.cpp").tried, 5);
}

TEST(TraceStats, JsonHasTheNumbers) {
  Trace t;
  t.Baseline(10).Step(9);
  const std::string j = TraceStatsJson(ComputeTraceStats(t.history, Goal::kMin, 5), true);
  EXPECT_NE(j.find("\"keep_rate\":1.0"), std::string::npos) << j;
  EXPECT_NE(j.find("\"families\""), std::string::npos) << j;
}

}  // namespace
}  // namespace ratchet
