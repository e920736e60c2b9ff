#include "outer/bandit.h"

#include <gtest/gtest.h>

#include "outer/search_points.h"
#include "outer/test_trace.h"

namespace ratchet {
namespace {

using testing::Trace;

std::unique_ptr<BanditMechanism> Make(const BanditOptions& options, const SearchSpace* space) {
  BuiltinContext ctx;
  ctx.space = space;
  std::unique_ptr<BanditMechanism> b;
  std::string err;
  EXPECT_TRUE(BanditMechanism::Create(ctx, options, &b, &err)) << err;
  return b;
}

// A proposal for experiment `id` with no result yet: the arm's step.
double ProposeAs(BanditMechanism* b, const Trace& t, int id) {
  LoopView view = t.View();
  view.next_id = id;
  Guidance g;
  b->BeforePropose(view, &g);
  return GetHint(g, "step").get<double>();
}

// One proposal and its result: the arm's step, and the experiment kept or not.
double Pull(BanditMechanism* b, Trace* t, bool keep) {
  const double step = ProposeAs(b, *t, t->View().next_id);
  t->Add(keep ? Status::kKeep : Status::kDiscard, 1);
  b->OnResult(t->View(), t->history.back());
  return step;
}

TEST(Bandit, TriesEveryArmThenFavoursTheOneThatKeeps) {
  BanditOptions options;
  options.steps = {0.01, 0.1, 0.4};
  auto b = Make(options, nullptr);
  Trace t;
  t.Baseline(10);
  // Each arm once, in order; only 0.1 is rewarded.
  EXPECT_EQ(Pull(b.get(), &t, false), 0.01);
  EXPECT_EQ(Pull(b.get(), &t, true), 0.1);
  EXPECT_EQ(Pull(b.get(), &t, false), 0.4);
  int best = 0;
  for (int i = 0; i < 20; ++i) {
    const double step = Pull(b.get(), &t, false);
    best += step == 0.1;
  }
  // UCB keeps trying the others now and then, but mostly the rewarded arm.
  EXPECT_GE(best, 8);
  EXPECT_EQ(b->arms()[1].reward, 1);
  EXPECT_EQ(b->arms()[0].pulls + b->arms()[1].pulls + b->arms()[2].pulls, 23);
  EXPECT_EQ(b->calls().at("on_result"), 23);
}

TEST(Bandit, ProposalsInFlightAtOnceSpreadOverTheArms) {
  // Three workers propose before any result is in: each gets its own arm.
  // Then the rewarded arm leads, and a pull of it still in flight lowers its
  // bound, not its mean.
  BanditOptions options;
  options.steps = {0.01, 0.1, 0.4};
  auto b = Make(options, nullptr);
  Trace t;
  t.Baseline(10);
  std::vector<double> steps;
  for (int id : {2, 3, 4}) steps.push_back(ProposeAs(b.get(), t, id));
  EXPECT_EQ(steps, (std::vector<double>{0.01, 0.1, 0.4}));
  for (Status s : {Status::kDiscard, Status::kKeep, Status::kDiscard}) {
    t.Add(s, 1);
    b->OnResult(t.View(), t.history.back());
  }
  for (const BanditArm& a : b->arms()) EXPECT_EQ(a.pulls, 1);
  std::vector<double> next;
  for (int id : {5, 6}) next.push_back(ProposeAs(b.get(), t, id));
  // The keep's arm first; with it in flight, its bound (1 + 0.5 sqrt(2 ln 4
  // / 2) = 1.59) still beats the others' (0 + 0.5 sqrt(2 ln 4) = 0.83).
  EXPECT_EQ(next, (std::vector<double>{0.1, 0.1}));
  EXPECT_EQ(b->arms()[1].pulls, 1);  // in flight is not a result
}

TEST(Bandit, LeavesAForcedProposalAloneAndIgnoresProposalsThatNeverRan) {
  auto b = Make(BanditOptions(), nullptr);
  Trace t;
  t.Baseline(10);
  Guidance g;
  g.search_hints_json = R"({"next":{"X":0.5}})";
  b->BeforePropose(t.View(), &g);
  EXPECT_TRUE(GetHint(g, "step").is_null());
  EXPECT_TRUE(b->acted().empty());
  Guidance g2;
  b->BeforePropose(t.View(), &g2);
  t.Add(Status::kRejected, std::nullopt);
  b->OnResult(t.View(), t.history.back());
  for (const BanditArm& a : b->arms()) EXPECT_EQ(a.pulls, 0);
}

TEST(Bandit, ArmsOverParametersAndFamilies) {
  const SearchSpace space = testing::SmallSpace();
  BanditOptions options;
  options.over = "params";
  auto b = Make(options, &space);
  ASSERT_EQ(b->arms().size(), 3u);
  EXPECT_EQ(b->arms()[0].hints.dump(), R"({"active":["X"]})");

  options.over = "families";
  options.families = {"change the optimiser", "change the architecture"};
  auto f = Make(options, nullptr);
  Trace t;
  t.Baseline(1);
  Guidance g;
  f->BeforePropose(t.View(), &g);
  ASSERT_EQ(g.text.size(), 1u);
  EXPECT_EQ(g.text[0], "Kind of change to try now: change the optimiser");

  BuiltinContext none;
  std::unique_ptr<BanditMechanism> out;
  std::string err;
  options.over = "params";
  EXPECT_FALSE(BanditMechanism::Create(none, options, &out, &err));
  EXPECT_NE(err.find("needs the search proposer"), std::string::npos) << err;
  options.over = "colours";
  EXPECT_FALSE(BanditMechanism::Create(none, options, &out, &err));
}

}  // namespace
}  // namespace ratchet
