// Table tests of the pure policy functions: the acceptance rule, the stop
// rules, the scope rule and the protected-file check. Each row is one
// situation and what the rule must say about it.
#include <gtest/gtest.h>

#include <cmath>

#include "core/accept.h"
#include "core/scope.h"
#include "core/stop.h"

namespace ratchet {
namespace {

struct AcceptRow {
  const char* name;
  Goal goal;
  double min_delta, noise_floor;
  int confirm;
  bool confirmed;
  Spread candidate, incumbent;
  Noise noise;
  bool keep, needs_confirmation;
  const char* reason;  // a part of the reason
};

TEST(DecideAcceptTable, EveryCase) {
  const AcceptRow rows[] = {
      {"better, no confirmation", Goal::kMin, 0, 0, 0, false, {0.9, 0, 1}, {1.0, 0, 1}, {}, true,
       false, "0.9 vs 1 (better by 0.1)"},
      {"worse", Goal::kMin, 0, 0, 0, false, {1.1, 0, 1}, {1.0, 0, 1}, {}, false, false,
       "1.1 vs 1 (worse by 0.1)"},
      {"equal is not better", Goal::kMin, 0, 0, 0, false, {1.0, 0, 1}, {1.0, 0, 1}, {}, false,
       false, "better by 0"},
      {"better, but not by min_delta", Goal::kMin, 0.2, 0, 0, false, {0.9, 0, 1}, {1.0, 0, 1}, {},
       false, false, "needs more than min_delta 0.2"},
      {"a higher value is worse when minimising, better when maximising", Goal::kMax, 0, 0, 0,
       false, {0.9, 0, 1}, {1.0, 0, 1}, {}, false, false, "worse by 0.1"},
      {"maximising, better", Goal::kMax, 0, 0, 0, false, {1.2, 0, 1}, {1.0, 0, 1}, {}, true,
       false, "better by 0.2"},
      {"looks better: confirm first", Goal::kMin, 0, 0, 2, false, {0.9, 0, 1}, {1.0, 0, 3}, {},
       false, true, "confirming with 2 more runs"},
      {"confirmed, beyond noise", Goal::kMin, 0, 0, 2, true, {0.9, 0.01, 2}, {1.0, 0.01, 3},
       {0.01, 10}, true, false, "mean of 2 confirm runs 0.9 vs 1 (better by 0.1), beyond noise"},
      {"confirmed, within noise", Goal::kMin, 0, 0, 2, true, {0.9, 0.1, 2}, {1.0, 0.1, 3},
       {0.1, 10}, false, false, "is within noise"},
      {"the noise floor widens the bar", Goal::kMin, 0, 0.05, 2, true, {0.9, 0.001, 2},
       {1.0, 0.001, 3}, {0.001, 10}, false, false, "is within noise"},
      // Identical runs measure no noise: rounding, not zero, is the bar, so
      // a no-op candidate 1e-12 better is not "beyond noise 1e-17".
      {"zero measured noise", Goal::kMin, 0, 0, 2, true, {1.0 - 1e-12, 0, 2}, {1.0, 0, 3},
       {0, 4}, false, false, "is within noise"},
      {"worse after confirming", Goal::kMin, 0, 0, 2, true, {1.05, 0.01, 2}, {1.0, 0.01, 3},
       {0.01, 10}, false, false, "mean of 2 confirm runs 1.05 vs 1 (worse by 0.05)"},
  };
  for (const AcceptRow& row : rows) {
    LoopConfig config;
    config.goal = row.goal;
    config.min_delta = row.min_delta;
    config.noise_floor = row.noise_floor;
    config.confirm = row.confirm;
    AcceptInput in{row.candidate, row.incumbent, row.noise};
    const AcceptDecision d = DecideAccept(in, config, row.confirmed);
    EXPECT_EQ(d.keep, row.keep) << row.name << ": " << d.reason;
    EXPECT_EQ(d.needs_confirmation, row.needs_confirmation) << row.name << ": " << d.reason;
    EXPECT_NE(d.reason.find(row.reason), std::string::npos) << row.name << ": " << d.reason;
  }
}

TEST(StudentCriticalTable, KnownQuantiles) {
  // Two-sided 95% (one-sided 2.5%, 1.96 sigma) quantiles of Student's t.
  const struct {
    int dof;
    double expect;
  } rows[] = {{1, 12.706}, {2, 4.303}, {4, 2.776}, {10, 2.228}, {30, 2.042}};
  for (const auto& row : rows)
    EXPECT_NEAR(StudentCritical(1.959964, row.dof), row.expect, 2e-3) << "dof " << row.dof;
  EXPECT_EQ(StudentCritical(2, 0), 2) << "no estimate: the normal's";
  EXPECT_EQ(StudentCritical(2, 5000), 2) << "many dof: the normal's";
}

TEST(PooledNoiseTable, GroupsOfRepeats) {
  EXPECT_EQ(PooledNoise({}).dof, 0);
  EXPECT_EQ(PooledNoise({{1.0}, {2.0}}).dof, 0) << "single runs say nothing about noise";
  const Noise one = PooledNoise({{1.0, 3.0}});
  EXPECT_EQ(one.dof, 1);
  EXPECT_NEAR(one.sigma, std::sqrt(2.0), 1e-12);
  // Pooled: sum of squares over the sum of degrees of freedom.
  const Noise two = PooledNoise({{1.0, 3.0}, {10.0, 10.0, 10.0}});
  EXPECT_EQ(two.dof, 3);
  EXPECT_NEAR(two.sigma, std::sqrt(2.0 / 3), 1e-12);
}

Experiment Done(int id, Status status, std::optional<double> metric = std::nullopt) {
  Experiment e;
  e.id = id;
  e.phase = Phase::kDone;
  e.status = status;
  e.metric = metric;
  e.reason = std::string(StatusName(status)) + " reason";
  return e;
}

TEST(CheckStopTable, EveryRule) {
  const std::vector<Experiment> kept_then_two = {Done(1, Status::kKeep, 1.0),
                                                 Done(2, Status::kDiscard, 1.2),
                                                 Done(3, Status::kDiscard, 1.1)};
  std::vector<Experiment> spent = kept_then_two;
  spent[1].usage.cost_usd = 3;
  spent[1].usage.input_tokens = 600;
  spent[2].usage.cost_usd = 2.5;
  spent[2].usage.output_tokens = 500;
  const std::vector<Experiment> failing = {Done(1, Status::kKeep, 1.0), Done(2, Status::kCrash),
                                           Done(3, Status::kInterrupted), Done(4, Status::kTimeout)};
  const std::vector<Experiment> recovered = {Done(1, Status::kKeep, 1.0), Done(2, Status::kCrash),
                                             Done(3, Status::kDiscard, 1.2)};
  struct Row {
    const char* name;
    const std::vector<Experiment>* history;
    int incumbent;  // index into history, -1: none
    std::function<void(LoopConfig*, StopInput*)> set;
    const char* expect;  // "" or a part of the reason
  };
  const Row rows[] = {
      {"nothing set", &kept_then_two, 0, [](LoopConfig*, StopInput*) {}, ""},
      {"Ctrl-C", &kept_then_two, 0, [](LoopConfig*, StopInput* in) { in->interrupts = 1; },
       "stopped by the user"},
      {"max_experiments counts the ones in flight", &kept_then_two, 0,
       [](LoopConfig* c, StopInput* in) { c->max_experiments = 4, in->in_flight = 1; },
       "reached stop.max_experiments (4)"},
      {"max_experiments not yet", &kept_then_two, 0,
       [](LoopConfig* c, StopInput*) { c->max_experiments = 4; }, ""},
      {"target reached exactly", &kept_then_two, 0,
       [](LoopConfig* c, StopInput*) { c->target = 1.0; }, "reached stop.target 1"},
      {"target not reached", &kept_then_two, 0,
       [](LoopConfig* c, StopInput*) { c->target = 0.9; }, ""},
      {"target when maximising", &kept_then_two, 0,
       [](LoopConfig* c, StopInput*) { c->goal = Goal::kMax, c->target = 0.9; },
       "reached stop.target 0.9"},
      {"no target before a baseline is kept", &kept_then_two, -1,
       [](LoopConfig* c, StopInput*) { c->target = 2.0; }, ""},
      {"wall", &kept_then_two, 0,
       [](LoopConfig* c, StopInput* in) { c->wall_s = 3600, in->elapsed_wall_s = 3600; },
       "used stop.wall (1.0h)"},
      {"patience", &kept_then_two, 0, [](LoopConfig* c, StopInput*) { c->patience = 2; },
       "stop.patience: 2 experiments without a new best"},
      {"patience not yet", &kept_then_two, 0, [](LoopConfig* c, StopInput*) { c->patience = 3; },
       ""},
      {"cost", &spent, 0, [](LoopConfig* c, StopInput*) { c->max_cost_usd = 5.5; },
       "spent $5.50 of stop.cost_usd $5.50"},
      {"tokens", &spent, 0, [](LoopConfig* c, StopInput*) { c->max_tokens = 1100; },
       "used 1100 tokens of stop.tokens 1100"},
      {"circuit breaker skips interrupted ones", &failing, 0,
       [](LoopConfig* c, StopInput*) { c->max_consecutive_failures = 2; },
       "circuit breaker: 2 failed experiments in a row (last: #4 timeout: timeout reason)"},
      {"a success resets the breaker", &recovered, 0,
       [](LoopConfig* c, StopInput*) { c->max_consecutive_failures = 1; }, ""},
  };
  for (const Row& row : rows) {
    LoopConfig config;
    config.metric_name = "score";
    StopInput in;
    in.history = row.history;
    in.incumbent = row.incumbent < 0 ? nullptr : &(*row.history)[static_cast<size_t>(row.incumbent)];
    row.set(&config, &in);
    const std::string got = CheckStop(in, config);
    if (std::string(row.expect).empty())
      EXPECT_EQ(got, "") << row.name;
    else
      EXPECT_NE(got.find(row.expect), std::string::npos) << row.name << ": " << got;
  }
}

TEST(CheckScopeTable, EveryChange) {
  LoopConfig config;
  config.edit_files = {"train.cpp", "src/*.h", "notes/**"};
  config.protected_files = {"prepare/", "ratchet.toml", "notes/frozen.md"};
  using K = FileChange::Kind;
  const struct {
    FileChange change;
    const char* expect;
  } rows[] = {
      {{K::kModified, "train.cpp"}, ""},
      {{K::kAdded, "src/x.h"}, ""},
      {{K::kDeleted, "src/a.h"}, ""},  // named by a glob: may go
      {{K::kAdded, "notes/a/b.md"}, ""},
      {{K::kAdded, "src/sub/x.h"}, "created src/sub/x.h, which is not in edit.files"},
      {{K::kModified, "Makefile"}, "changed Makefile, which is not in edit.files"},
      {{K::kDeleted, "README"}, "deleted README, which is not in edit.files"},
      {{K::kModified, "ratchet.toml"}, "changed protected file ratchet.toml"},
      {{K::kAdded, "prepare/evil.py"}, "changed protected file prepare/evil.py"},
      {{K::kModified, "notes/frozen.md"}, "changed protected file notes/frozen.md"},
      {{K::kDeleted, "train.cpp"}, "deleted train.cpp, which edit.files names"},
      {{K::kAdded, "train.cpp", "a symbolic link"},
       "train.cpp a symbolic link; a candidate holds regular files only"},
  };
  for (const auto& row : rows) {
    const std::string got = CheckScope({row.change}, config);
    if (std::string(row.expect).empty())
      EXPECT_EQ(got, "") << row.change.path;
    else
      EXPECT_EQ(got.find(row.expect), 0u) << row.change.path << ": " << got;
  }
  // The first offence in the list is the one reported.
  EXPECT_EQ(CheckScope({{K::kModified, "train.cpp"}, {K::kModified, "b"}, {K::kModified, "c"}},
                       config),
            "changed b, which is not in edit.files");
}

TEST(CompareProtectedHashesTable, AddedRemovedChanged) {
  const std::map<std::string, std::string> recorded = {{"a", "1"}, {"b", "2"}};
  const struct {
    std::map<std::string, std::string> now;
    const char* expect;
  } rows[] = {
      {{{"a", "1"}, {"b", "2"}}, ""},
      {{{"a", "1"}}, "protected file b was removed"},
      {{{"a", "1"}, {"b", "3"}}, "protected file b changed"},
      {{{"a", "1"}, {"b", "2"}, {"c", "4"}}, "protected file c appeared"},
      {{}, "protected file a was removed"},
  };
  for (const auto& row : rows) EXPECT_EQ(CompareProtectedHashes(recorded, row.now), row.expect);
}

}  // namespace
}  // namespace ratchet
