#include "core/prune.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/curve.h"

namespace ratchet {
namespace {

// Two runs of the default GPT loop's baseline at a 60 s budget, as recorded
// (/work/rec/gpt, experiment 1: run.log and run-2.log): elapsed, loss.
const std::vector<std::pair<double, double>> kBaselineA = {
    {0.0, 5.5452},  {5.2, 2.7164},  {10.2, 1.9929}, {15.2, 1.7024}, {20.3, 1.5621}, {25.4, 1.5093},
    {30.5, 1.4532}, {35.5, 1.4375}, {40.6, 1.4032}, {45.7, 1.3587}, {50.8, 1.3251}, {56.0, 1.2811}};
const std::vector<std::pair<double, double>> kBaselineB = {
    {0.0, 5.5452},  {5.0, 2.7522},  {10.2, 2.0236}, {15.3, 1.6857}, {20.5, 1.5460}, {25.5, 1.4786},
    {30.5, 1.4605}, {35.6, 1.4308}, {40.8, 1.3866}, {45.8, 1.3669}, {50.9, 1.3081}, {56.0, 1.2547}};

Curve MakeCurve(const std::vector<std::pair<double, double>>& points, double shift = 0,
                double scale = 1) {
  Curve c;
  for (const auto& [t, loss] : points) c.push_back({t, {{"loss", loss * scale + shift}}});
  return c;
}

PruneConfig Median() {
  PruneConfig p;
  p.rule = "median";
  p.value = "loss";
  p.min_runs = 2;
  return p;
}

// Feeds `candidate` point by point, as the engine does; returns whether it
// was pruned and the time of the point that pruned it.
bool Feed(Pruner* pruner, const Curve& candidate, const PruneReference& ref, double* at = nullptr) {
  Curve so_far;
  for (const CurvePoint& p : candidate) {
    so_far.push_back(p);
    if (pruner->Observe(so_far, ref)) {
      if (at) *at = p.t;
      return true;
    }
  }
  return false;
}

struct Recorded {
  Curve a = MakeCurve(kBaselineA), b = MakeCurve(kBaselineB);
  PruneReference ref;
  Recorded() {
    ref.completed = {&a, &b};
    ref.incumbent = &a;
    ref.repeats = {{&a, &b}};
  }
};

TEST(CurveTest, ParsesProgressLines) {
  CurvePoint p;
  ASSERT_TRUE(ParseProgressLine("progress: elapsed=12.3 step=40 loss=2.41 mfu=41%", 7.5, &p));
  EXPECT_EQ(p.t, 7.5) << "time is ratchet's, not the run's elapsed=";
  EXPECT_EQ(p.values.at("elapsed"), 12.3);
  EXPECT_EQ(p.values.at("loss"), 2.41);
  EXPECT_EQ(p.values.at("mfu"), 41);
  ASSERT_TRUE(ParseProgressLine("  progress: loss=nan note=warm", 1, &p));
  EXPECT_TRUE(std::isnan(p.values.at("loss")));
  EXPECT_FALSE(p.values.count("note"));
  EXPECT_FALSE(ParseProgressLine("step 5 loss=3", 1, &p));
  EXPECT_FALSE(ParseProgressLine("progress: warming up", 1, &p));
}

TEST(CurveTest, ValueAtInterpolatesBetweenPoints) {
  Curve c = MakeCurve(kBaselineA);
  double v = 0;
  EXPECT_TRUE(ValueAt(c, "loss", 15.2, &v));
  EXPECT_EQ(v, 1.7024);
  EXPECT_TRUE(ValueAt(c, "loss", 17.75, &v));
  EXPECT_NEAR(v, (1.7024 + 1.5621) / 2, 1e-9);
  EXPECT_TRUE(ValueAt(c, "loss", 99, &v));
  EXPECT_EQ(v, 1.2811) << "past the end: the last value";
  EXPECT_FALSE(ValueAt(c, "loss", -1, &v));
  EXPECT_FALSE(ValueAt(c, "step", 30, &v));
}

TEST(CurveTest, AppendPointStaysBoundedAndKeepsTheNewest) {
  Curve c;
  for (int i = 0; i < 10000; ++i) AppendPoint(&c, {double(i), {{"loss", double(i)}}}, 64);
  EXPECT_LE(c.size(), 64u);
  EXPECT_EQ(c.back().t, 9999);
  EXPECT_EQ(c.front().t, 0);
  for (size_t i = 1; i < c.size(); ++i) EXPECT_LT(c[i - 1].t, c[i].t);
}

TEST(PruneTest, NoiseIsTheSpreadOfRepeatedRuns) {
  Recorded r;
  double sigma = 0;
  ASSERT_TRUE(Pruner::NoiseAt(r.ref.repeats, "loss", 30.5, &sigma));
  EXPECT_NEAR(sigma, std::fabs(1.4532 - 1.4605) / std::sqrt(2.0), 1e-9);
  EXPECT_FALSE(Pruner::NoiseAt({{&r.a}}, "loss", 15.5, &sigma)) << "one run measures no noise";
}

TEST(PruneTest, MedianRulePrunesAClearlyWorseRunAndNotASlightlyBetterOne) {
  Recorded r;
  Pruner worse(Median(), 60);
  double at = 0;
  ASSERT_TRUE(Feed(&worse, MakeCurve(kBaselineA, 0.3), r.ref, &at));
  // Checkpoints at 25% (15 s) and 50% (30 s); patience 2: pruned at 30 s.
  EXPECT_EQ(worse.pruned_at(), 0.5);
  EXPECT_NEAR(at, 30.5, 1e-9);
  EXPECT_NE(worse.reason().find("median of 2 earlier runs"), std::string::npos) << worse.reason();
  EXPECT_NE(worse.reason().find("2 checkpoints in a row"), std::string::npos) << worse.reason();

  Pruner better(Median(), 60);
  EXPECT_FALSE(Feed(&better, MakeCurve(kBaselineB, -0.01), r.ref));
  EXPECT_EQ(better.pruned_at(), 0);
  // Worse, but within twice the noise at every checkpoint: goes on.
  Pruner within(Median(), 60);
  EXPECT_FALSE(Feed(&within, MakeCurve(kBaselineA, 0.005), r.ref));
}

TEST(PruneTest, PatienceNeedsConsecutiveWorseCheckpoints) {
  Recorded r;
  // Worse at 25% only, then back with the others: never two in a row.
  Curve dip = MakeCurve(kBaselineB);
  for (CurvePoint& p : dip)
    if (p.t > 14 && p.t < 20) p.values["loss"] += 0.5;
  Pruner pruner(Median(), 60);
  EXPECT_FALSE(Feed(&pruner, dip, r.ref));
  PruneConfig one = Median();
  one.patience = 1;
  Pruner eager(one, 60);
  EXPECT_TRUE(Feed(&eager, dip, r.ref));
  EXPECT_EQ(eager.pruned_at(), 0.25);
}

TEST(PruneTest, WarmupSkipsEarlyCheckpoints) {
  Recorded r;
  PruneConfig p = Median();
  p.patience = 1;
  p.warmup = 0.6;
  Pruner pruner(p, 60);
  ASSERT_TRUE(Feed(&pruner, MakeCurve(kBaselineA, 0.3), r.ref));
  EXPECT_EQ(pruner.pruned_at(), 0.75);
}

TEST(PruneTest, MedianRuleWaitsForMinRuns) {
  Recorded r;
  PruneConfig p = Median();
  p.min_runs = 3;
  Pruner pruner(p, 60);
  EXPECT_FALSE(Feed(&pruner, MakeCurve(kBaselineA, 1.0), r.ref));
  EXPECT_NE(pruner.unjudged().find("min_runs 3"), std::string::npos) << pruner.unjudged();
}

TEST(PruneTest, WithoutMeasuredNoiseOnlyAMarginPrunes) {
  Recorded r;
  r.ref.repeats.clear();
  Pruner blind(Median(), 60);
  EXPECT_FALSE(Feed(&blind, MakeCurve(kBaselineA, 1.0), r.ref));
  EXPECT_NE(blind.unjudged().find("no run-to-run noise"), std::string::npos) << blind.unjudged();
  PruneConfig p = Median();
  p.margin = 0.1;
  Pruner margin(p, 60);
  EXPECT_TRUE(Feed(&margin, MakeCurve(kBaselineA, 0.2), r.ref));
  EXPECT_NE(margin.reason().find("(margin)"), std::string::npos) << margin.reason();
}

TEST(PruneTest, IncumbentRuleComparesWithTheBest) {
  Recorded r;
  PruneConfig p = Median();
  p.rule = "incumbent";
  Pruner pruner(p, 60);
  ASSERT_TRUE(Feed(&pruner, MakeCurve(kBaselineA, 0.2), r.ref));
  EXPECT_NE(pruner.reason().find("the current best's"), std::string::npos) << pruner.reason();
  r.ref.incumbent = nullptr;
  Pruner none(p, 60);
  EXPECT_FALSE(Feed(&none, MakeCurve(kBaselineA, 0.2), r.ref));
}

TEST(PruneTest, HalvingKeepsOnlyTheBestThird) {
  Recorded r;
  std::vector<Curve> earlier;
  for (double shift : {-0.2, -0.1, 0.0, 0.1, 0.2, 0.3}) earlier.push_back(MakeCurve(kBaselineA, shift));
  r.ref.completed.clear();
  for (const Curve& c : earlier) r.ref.completed.push_back(&c);
  PruneConfig p = Median();
  p.rule = "halving";
  p.patience = 1;
  // The best 1/3 of 6 runs: the second best (-0.1) is the bar.
  Pruner middle(p, 60);
  ASSERT_TRUE(Feed(&middle, MakeCurve(kBaselineA, 0.0), r.ref));
  EXPECT_EQ(middle.pruned_at(), 0.25);
  EXPECT_NE(middle.reason().find("best 1/3 of 6"), std::string::npos) << middle.reason();
  Pruner top(p, 60);
  EXPECT_FALSE(Feed(&top, MakeCurve(kBaselineA, -0.1), r.ref));
}

TEST(PruneTest, NanIsWorseThanAnything) {
  Recorded r;
  Curve broken = MakeCurve(kBaselineA);
  for (CurvePoint& p : broken)
    if (p.t > 10) p.values["loss"] = std::nan("");
  Pruner pruner(Median(), 60);
  EXPECT_TRUE(Feed(&pruner, broken, r.ref));
}

TEST(PruneTest, GoalMaxPrunesLowValues) {
  Recorded r;
  Curve a = MakeCurve(kBaselineA, 0, -1), b = MakeCurve(kBaselineB, 0, -1);  // accuracy-like
  PruneReference ref;
  ref.completed = {&a, &b};
  ref.repeats = {{&a, &b}};
  PruneConfig p = Median();
  p.goal = Goal::kMax;
  Pruner low(p, 60);
  EXPECT_TRUE(Feed(&low, MakeCurve(kBaselineA, -0.3, -1), ref));
  Pruner high(p, 60);
  EXPECT_FALSE(Feed(&high, MakeCurve(kBaselineA, 0.3, -1), ref));
}

}  // namespace
}  // namespace ratchet
