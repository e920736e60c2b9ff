#include "outer/explore.h"

#include <gtest/gtest.h>

#include <set>

#include "outer/search_points.h"
#include "outer/test_trace.h"

namespace ratchet {
namespace {

using testing::P;
using testing::Trace;

TEST(StuckSchedule, EpisodesOfExploreThenRestartThenRest) {
  StuckSchedule s;
  s.stuck_after = 3;
  s.explore = 2;
  s.restart = 1;
  using Slot = StuckSchedule::Slot;
  const Slot expected[] = {Slot::kNone,    Slot::kNone, Slot::kNone,    // 0..2: not stuck
                           Slot::kExplore, Slot::kExplore, Slot::kRestart,  // 3..5
                           Slot::kNone,    Slot::kNone, Slot::kNone,    // 6..8: the search alone
                           Slot::kExplore};                                 // 9: the next episode
  for (int since = 0; since < 10; ++since)
    EXPECT_EQ(s.SlotAt(since), expected[since]) << since;
  EXPECT_EQ(s.EpisodeAt(9), 1);
  EXPECT_EQ(s.StepAt(4), 1);
  EXPECT_EQ(s.StepAt(5), 0);
}

// A loop stuck at (0.5, 0.5) for `n` experiments of small steps.
Trace Stuck(int n) {
  Trace t;
  t.Baseline(10).Step(5, P(0.5, 0.5));
  for (int i = 0; i < n; ++i) t.Step(6 + 0.01 * i, P(0.5 + 0.01 * (i + 1), 0.5));
  return t;
}

BuiltinContext Context(const SearchSpace* space) {
  BuiltinContext ctx;
  ctx.space = space;
  ctx.seed = 7;
  ctx.schedule.stuck_after = 4;
  ctx.schedule.explore = 3;
  ctx.schedule.restart = 2;
  return ctx;
}

TEST(Explore, ForcesNewSpreadOutPointsWhileStuckAndNothingOtherwise) {
  const SearchSpace space = testing::SmallSpace();
  ExploreMechanism explore(Context(&space));
  Trace t = Stuck(3);
  Guidance quiet;
  explore.BeforePropose(t.View(), &quiet);
  EXPECT_TRUE(quiet.search_hints_json.empty()) << "not stuck yet";

  t.Step(7, P(0.1, 0.1, 1));  // now 4 since the best
  std::vector<Point> forced;
  for (int k = 0; k < 3; ++k) {
    Guidance g;
    explore.BeforePropose(t.View(), &g);
    const nlohmann::json next = GetHint(g, "next");
    ASSERT_TRUE(next.is_object()) << k << ": " << g.search_hints_json;
    Experiment e;
    e.params_json = next.dump();
    std::optional<Point> p = ExperimentPoint(space, e, nullptr);
    ASSERT_TRUE(p);
    for (const Point& q : forced) EXPECT_NE(*p, q);
    forced.push_back(*p);
    t.Step(8, next.dump());  // worse: still stuck, and the point is now tried
  }
  // A design spreads its rows: one per third of X's range.
  std::set<int> thirds;
  for (const Point& p : forced) thirds.insert(std::min(2, static_cast<int>(p[0] * 3)));
  EXPECT_EQ(thirds.size(), 3u);
  EXPECT_EQ(explore.acted().size(), 3u);
  Guidance after;  // the restart slot now
  explore.BeforePropose(t.View(), &after);
  EXPECT_TRUE(after.search_hints_json.empty());
}

TEST(Explore, RespectsTabuPointsAndAPointAlreadyForced) {
  const SearchSpace space = testing::SmallSpace();
  ExploreMechanism explore(Context(&space));
  Trace t = Stuck(4);
  Guidance g;
  g.search_hints_json = R"({"next":{"X":0.3}})";
  explore.BeforePropose(t.View(), &g);
  EXPECT_EQ(GetHint(g, "next").dump(), R"({"X":0.3})");
  EXPECT_TRUE(explore.acted().empty());
}

TEST(Explore, LeavesASearchThatSpreadsItsProposalsAlone) {
  const SearchSpace space = testing::SmallSpace();
  ExploreMechanism explore(Context(&space));
  Trace t;
  t.Baseline(10).Step(5, P(0.5, 0.5));
  // Stuck, but the search's own proposals are all over the space.
  for (double x : {0.1, 0.9, 0.2, 0.8}) t.Step(6, P(x, 1 - x));
  Guidance g;
  explore.BeforePropose(t.View(), &g);
  EXPECT_TRUE(g.search_hints_json.empty()) << g.search_hints_json;
  EXPECT_FALSE(SearchIsLocal(Context(&space), t.View(), 4));
  EXPECT_TRUE(SearchIsLocal(Context(&space), Stuck(4).View(), 4));
}

TEST(Explore, TellsAnAgentToMakeABoldChange) {
  ExploreMechanism explore(Context(nullptr));
  Trace t = Stuck(4);
  Guidance g;
  explore.BeforePropose(t.View(), &g);
  ASSERT_EQ(g.text.size(), 1u);
  EXPECT_NE(g.text[0].find("Explore (1 of 3)"), std::string::npos) << g.text[0];
}

TEST(Restart, StepsFromTheBestPointFarFromTheIncumbent) {
  const SearchSpace space = testing::SmallSpace();
  RestartOptions options;
  options.min_distance = 0.25;
  options.step = 0.02;
  BuiltinContext ctx = Context(&space);
  ctx.stuck_spread = 1;  // this trace's own proposals are spread out
  RestartMechanism restart(ctx, options);
  Trace t;
  t.Baseline(10).Step(5, P(0.5, 0.5));
  t.Step(5.5, P(0.52, 0.5));  // near the incumbent: not an elite
  t.Step(7, P(0.9, 0.1));     // far, but worse than the next
  t.Step(6, P(0.1, 0.9));     // the elite
  t.Step(8, P(0.3, 0.3));
  t.Step(9, P(0.7, 0.7));
  t.Step(9, P(0.2, 0.6));     // 6 since the best: explore slot (4, 5, 6) ...
  EXPECT_EQ(restart.Elite(t.View())->id, 5);
  Guidance g;
  restart.BeforePropose(t.View(), &g);
  EXPECT_TRUE(g.search_hints_json.empty()) << "explore's slot";
  t.Step(9, P(0.6, 0.2));  // 7: the restart slot
  restart.BeforePropose(t.View(), &g);
  const nlohmann::json next = GetHint(g, "next");
  ASSERT_TRUE(next.is_object()) << g.search_hints_json;
  Experiment e;
  e.params_json = next.dump();
  const Point p = *ExperimentPoint(space, e, nullptr);
  EXPECT_LT(UnitDistance(space, p, {0.1, 0.9, 5}), 0.2) << next.dump();
  EXPECT_GT(UnitDistance(space, p, {0.1, 0.9, 5}), 0) << "a new point";
  EXPECT_EQ(restart.acted().size(), 1u);
}

TEST(Restart, TellsAnAgentWhichExperimentToStartFrom) {
  RestartMechanism restart(Context(nullptr), RestartOptions());
  Trace t;
  t.Baseline(10).Add(Status::kKeep, 5, "", "best so far");
  t.Add(Status::kDiscard, 6, "", "a different idea");
  for (int i = 0; i < 7; ++i) t.Add(Status::kDiscard, 9, "", "small step");
  Guidance g;
  restart.BeforePropose(t.View(), &g);  // 8 since the best: restart slot (7, 8)
  ASSERT_EQ(g.text.size(), 1u);
  EXPECT_NE(g.text[0].find("experiment #3 (6, discard)"), std::string::npos) << g.text[0];
  EXPECT_NE(g.text[0].find("refs/ratchet/tried/3"), std::string::npos);
}

}  // namespace
}  // namespace ratchet
