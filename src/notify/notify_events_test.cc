#include "notify/notify_events.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ratchet {
namespace {

Experiment Exp(int id, Status status, std::optional<double> metric, const std::string& what) {
  Experiment e;
  e.id = id;
  e.status = status;
  e.metric = metric;
  e.description = what;
  e.baseline = id == 1;
  e.candidate_commit = "c" + std::to_string(id);
  return e;
}

LoopIdentity Loop() { return LoopIdentity{"night1", "/loops/night1", "val_bpb", true}; }

TEST(NotifyEventsTest, NewBestSaysWhatItBeat) {
  NotifyEvents events(Loop());
  Experiment base = Exp(1, Status::kKeep, 1.5, "baseline");
  EXPECT_TRUE(events.OnFinished(base, &base, 100).empty()) << "the baseline is no new best";
  Experiment worse = Exp(2, Status::kDiscard, 1.6, "raise the LR");
  EXPECT_TRUE(events.OnFinished(worse, &base, 101).empty());
  Experiment better = Exp(3, Status::kKeep, 1.25, "lower the LR");
  std::vector<NotifyEvent> out = events.OnFinished(better, &better, 102);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, NotifyKind::kNewBest);
  EXPECT_EQ(out[0].text, "ratchet night1: new best #3 val_bpb 1.25 (was 1.5): lower the LR");
  EXPECT_EQ(*out[0].previous_best, 1.5);

  nlohmann::json j = nlohmann::json::parse(JsonBody(out[0], events.loop()));
  EXPECT_EQ(j["event"], "new_best");
  EXPECT_EQ(j["loop"], "night1");
  EXPECT_EQ(j["dir"], "/loops/night1");
  EXPECT_EQ(j["goal"], "min");
  EXPECT_EQ(j["experiment"]["id"], 3);
  EXPECT_EQ(j["experiment"]["metric"], 1.25);
  EXPECT_EQ(j["experiment"]["commit"], "c3");
  EXPECT_EQ(j["previous_best"], 1.5);
  EXPECT_EQ(j["at"], 102);
  EXPECT_EQ(nlohmann::json::parse(SlackBody(out[0])),
            (nlohmann::json{{"text", out[0].text}}));
}

TEST(NotifyEventsTest, ASeededBestIsWhatTheFirstNewBestBeat) {
  NotifyEvents events(Loop());
  Experiment old_best = Exp(7, Status::kKeep, 1.1, "earlier session");
  events.Seed(&old_best);
  Experiment better = Exp(8, Status::kKeep, 1.0, "wider");
  std::vector<NotifyEvent> out = events.OnFinished(better, &better, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*out[0].previous_best, 1.1);
}

TEST(NotifyEventsTest, StopCircuitBreakerAndBaselineFailure) {
  NotifyEvents events(Loop());
  Experiment crash = Exp(1, Status::kCrash, std::nullopt, "baseline");
  crash.reason = "exit 1";
  std::vector<NotifyEvent> out = events.OnFinished(crash, nullptr, 5);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, NotifyKind::kBaselineFailed);
  EXPECT_EQ(out[0].text, "ratchet night1: the baseline failed (crash: exit 1); the loop cannot start");
  out = events.OnStop("the baseline failed (crash: exit 1); fix the workload, then run again", 6);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, NotifyKind::kStop);
  EXPECT_EQ(out[0].text,
            "ratchet night1: stopped: the baseline failed (crash: exit 1); fix the workload, then "
            "run again; no result yet");
  nlohmann::json j = nlohmann::json::parse(JsonBody(out[0], events.loop()));
  EXPECT_FALSE(j.contains("best"));
  EXPECT_EQ(j["reason"], "the baseline failed (crash: exit 1); fix the workload, then run again");

  NotifyEvents loop2(Loop());
  Experiment base = Exp(1, Status::kKeep, 2.0, "baseline");
  loop2.OnFinished(base, &base, 1);
  out = loop2.OnStop("circuit breaker: 3 failed experiments in a row (last: #4 crash: exit 2)", 9);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, NotifyKind::kCircuitBreaker);
  EXPECT_EQ(out[0].text,
            "ratchet night1: stopped by the circuit breaker: 3 failed experiments in a row (last: "
            "#4 crash: exit 2); best #1 val_bpb 2 (the baseline)");
  j = nlohmann::json::parse(JsonBody(out[0], loop2.loop()));
  EXPECT_EQ(j["event"], "circuit_breaker");
  EXPECT_EQ(j["best"]["id"], 1);
}

TEST(NotifyEventsTest, InvalidUtf8IsReplacedNotThrown) {
  NotifyEvents events(Loop());
  Experiment base = Exp(1, Status::kKeep, 2.0, "baseline");
  events.OnFinished(base, &base, 1);
  Experiment odd = Exp(2, Status::kKeep, 1.0, std::string("bad \xff byte"));
  std::vector<NotifyEvent> out = events.OnFinished(odd, &odd, 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(nlohmann::json::accept(SlackBody(out[0])));
  EXPECT_TRUE(nlohmann::json::accept(JsonBody(out[0], events.loop())));
}

TEST(NotifyEventsTest, KindNames) {
  for (NotifyKind k : AllNotifyKinds()) {
    NotifyKind back;
    ASSERT_TRUE(ParseNotifyKind(NotifyKindName(k), &back));
    EXPECT_EQ(back, k);
  }
  NotifyKind k;
  EXPECT_FALSE(ParseNotifyKind("new-best", &k));
  EXPECT_EQ(NotifyKindNames(), "new_best, stop, circuit_breaker, baseline_failed");
}

}  // namespace
}  // namespace ratchet
