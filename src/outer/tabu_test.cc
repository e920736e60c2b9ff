#include "outer/tabu.h"

#include <gtest/gtest.h>

#include "outer/search_points.h"
#include "outer/test_trace.h"
#include "propose/search/optimizer.h"

namespace ratchet {
namespace {

using testing::P;
using testing::Trace;

TEST(Tabu, GivesTheSearchRecentFailuresAndDiscardsAsTabuPoints) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  TabuOptions options;
  options.tenure = 1;  // only the most recent discard
  options.radius = 0.1;
  TabuMechanism tabu(ctx, options);
  Trace t;
  t.Baseline(10)
      .Step(9, P(0.5, 0.5))
      .Step(11, P(0.2, 0.2))                           // older discard: out of the tenure
      .Add(Status::kCrash, std::nullopt, P(0.9, 0.9))  // a failure
      .Step(12, P(0.4, 0.4));                          // the newest discard
  Guidance g;
  tabu.BeforePropose(t.View(), &g);
  const nlohmann::json avoid = GetHint(g, "avoid");
  ASSERT_TRUE(avoid.is_array()) << g.search_hints_json;
  ASSERT_EQ(avoid.size(), 2u);
  EXPECT_EQ(avoid[0]["X"], 0.4);
  EXPECT_EQ(avoid[1]["X"], 0.9);
  EXPECT_EQ(GetHint(g, "avoid_radius"), 0.1);
  EXPECT_EQ(tabu.acted().count(6), 1u);
  EXPECT_EQ(tabu.calls().at("before_propose"), 1);

  // The hints are valid for the search, and it honours them.
  SearchHints hints;
  std::string err;
  const Point incumbent = {0.5, 0.5, 5};
  ASSERT_TRUE(ParseSearchHints(g.search_hints_json, space, incumbent, &hints, &err)) << err;
  SearchOptions so;
  so.algorithm = Algorithm::kRandom;
  const Optimizer opt(&space, so);
  for (uint64_t salt = 0; salt < 50; ++salt) {
    Suggestion s;
    ASSERT_TRUE(opt.Suggest({}, hints, &incumbent, salt, &s).Report(&err)) << err;
    const bool near_crash = std::fabs(s.point[0] - 0.9) <= 0.1 && std::fabs(s.point[1] - 0.9) <= 0.1 &&
                            s.point[2] == 5;
    EXPECT_FALSE(near_crash) << space.Describe(s.point);
  }
}

TEST(Tabu, VetoesACandidateInsideTheRadius) {
  const SearchSpace space = testing::SmallSpace();
  BuiltinContext ctx;
  ctx.space = &space;
  TabuMechanism tabu(ctx, TabuOptions());  // radius 0.05
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5)).Add(Status::kCrash, std::nullopt, P(0.9, 0.9));
  CandidateView near;
  near.experiment_id = 4;
  near.params_json = P(0.93, 0.88);
  const CandidateVerdict v = tabu.OnCandidate(t.View(), near);
  EXPECT_TRUE(v.veto);
  EXPECT_NE(v.reason.find("within 0.05 of #3 (crash)"), std::string::npos) << v.reason;
  CandidateView far = near;
  far.params_json = P(0.8, 0.9);
  EXPECT_FALSE(tabu.OnCandidate(t.View(), far).veto);
  EXPECT_EQ(tabu.calls().at("on_candidate"), 2);
  EXPECT_EQ(tabu.acted().size(), 1u);
}

TEST(Tabu, ForAnAgentListsFailedChangesAndVetoesTheSameChangeAgain) {
  BuiltinContext ctx;  // no search space
  TabuMechanism tabu(ctx, TabuOptions());
  Trace t;
  t.Baseline(10).Add(Status::kDiscard, 11, "", "Use GELU").Add(Status::kKeep, 9, "", "wider");
  Guidance g;
  tabu.BeforePropose(t.View(), &g);
  ASSERT_EQ(g.text.size(), 1u);
  EXPECT_NE(g.text[0].find("#2 (discard): Use GELU"), std::string::npos) << g.text[0];
  EXPECT_TRUE(g.search_hints_json.empty());
  CandidateView c;
  c.description = "use  gelu";
  EXPECT_TRUE(tabu.OnCandidate(t.View(), c).veto);
  c.description = "use silu";
  EXPECT_FALSE(tabu.OnCandidate(t.View(), c).veto);
}

TEST(Tabu, NothingToAvoidYet) {
  BuiltinContext ctx;
  TabuMechanism tabu(ctx, TabuOptions());
  Trace t;
  t.Baseline(10).Step(9);
  Guidance g;
  tabu.BeforePropose(t.View(), &g);
  EXPECT_TRUE(g.text.empty());
  EXPECT_TRUE(tabu.acted().empty());
  EXPECT_EQ(tabu.total_calls(), 1);  // called all the same
}

}  // namespace
}  // namespace ratchet
