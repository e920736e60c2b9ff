// The external-mechanism protocol with real programs (tests/mechanisms/*.sh):
// a good one is called at its hooks; one that crashes, hangs, answers garbage
// or is never called is detected, and answers nothing from then on.
#include "outer/external_mechanism.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "outer/mechanism_check.h"
#include "outer/test_trace.h"

namespace ratchet {
namespace {

using testing::P;
using testing::Trace;

const std::string kDir = RATCHET_MECHANISMS_DIR;

ExternalSpec Spec(const std::string& name, std::vector<std::string> command, double timeout = 5) {
  ExternalSpec s;
  s.name = name;
  s.command = std::move(command);
  s.timeout_s = timeout;
  return s;
}

ExternalSpec Misbehaving(const std::string& mode, const std::string& at = "before_propose",
                         double timeout = 5) {
  return Spec(mode, {"sh", kDir + "/misbehave.sh", mode, at}, timeout);
}

Trace ThreeExperiments() {
  Trace t;
  t.Baseline(10).Step(9, P(0.5, 0.5)).Step(9.5, P(0.6, 0.5));
  return t;
}

TEST(ExternalMechanism, AGoodOneIsCalledAtItsHooksAndCatchesUpOnTheTrace) {
  const std::string count = ::testing::TempDir() + "/good-count";
  std::filesystem::remove(count);
  setenv("GOOD_COUNT_FILE", count.c_str(), 1);
  const SearchSpace space = testing::SmallSpace();
  Trace t = ThreeExperiments();
  std::string kind, err;
  auto m = ExternalMechanism::Start(Spec("good", {"sh", kDir + "/good.sh"}), t.config, &space,
                                    &kind, &err);
  unsetenv("GOOD_COUNT_FILE");
  ASSERT_TRUE(m) << kind << ": " << err;
  EXPECT_EQ(m->hooks(),
            (std::vector<Hook>{Hook::kBeforePropose, Hook::kOnCandidate, Hook::kOnResult}));

  Guidance g;
  m->BeforePropose(t.View(), &g);
  EXPECT_EQ(g.text, std::vector<std::string>{"try something new"});
  EXPECT_EQ(m->acted().count(4), 1u);
  CandidateView c;
  c.experiment_id = 4;
  c.description = "a BAD idea";
  const CandidateVerdict v = m->OnCandidate(t.View(), c);
  EXPECT_TRUE(v.veto);
  EXPECT_EQ(v.reason, "looks bad");
  t.Add(Status::kRejected, std::nullopt, "", "a BAD idea");
  m->OnResult(t.View(), t.history.back());
  EXPECT_TRUE(m->failure().empty()) << m->failure();
  // Three replayed results, then the live one.
  std::ifstream in(count);
  int n = 0;
  in >> n;
  EXPECT_EQ(n, 4);
  EXPECT_EQ(m->calls().at("on_result"), 1);  // replays are not hook calls
  EXPECT_EQ(m->exchanges(), 1 + 3 + 3);      // hello, three replays, three hooks
}

TEST(ExternalMechanism, ACrashIsDetectedAndTheMechanismFallsSilent) {
  Trace t = ThreeExperiments();
  std::string kind, err;
  auto m = ExternalMechanism::Start(Misbehaving("crash", "on_candidate"), t.config, nullptr, &kind,
                                    &err);
  ASSERT_TRUE(m) << err;
  Guidance g;
  m->BeforePropose(t.View(), &g);
  EXPECT_TRUE(m->failure().empty());
  CandidateView c;
  c.experiment_id = 4;
  EXPECT_FALSE(m->OnCandidate(t.View(), c).veto);
  EXPECT_EQ(m->failure_kind(), "crash");
  EXPECT_NE(m->failure().find("exit 3"), std::string::npos) << m->failure();
  EXPECT_NE(m->failure().find("on_candidate"), std::string::npos) << m->failure();
  // Still called (and counted), but it does nothing now.
  Guidance later;
  m->BeforePropose(t.View(), &later);
  EXPECT_TRUE(later.text.empty());
  EXPECT_EQ(m->calls().at("before_propose"), 2);
}

TEST(ExternalMechanism, AHangIsKilledAtTheTimeLimit) {
  Trace t = ThreeExperiments();
  std::string kind, err;
  auto m = ExternalMechanism::Start(Misbehaving("hang", "before_propose", 0.3), t.config, nullptr,
                                    &kind, &err);
  ASSERT_TRUE(m) << err;
  const auto t0 = std::chrono::steady_clock::now();
  Guidance g;
  m->BeforePropose(t.View(), &g);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
  EXPECT_EQ(m->failure_kind(), "hang");
  EXPECT_NE(m->failure().find("no answer to before_propose within 0.3s"), std::string::npos)
      << m->failure();
}

TEST(ExternalMechanism, GarbageAnswersAreRefused) {
  Trace t = ThreeExperiments();
  std::string kind, err;
  auto m = ExternalMechanism::Start(Misbehaving("garbage"), t.config, nullptr, &kind, &err);
  ASSERT_TRUE(m) << err;
  Guidance g;
  m->BeforePropose(t.View(), &g);
  EXPECT_EQ(m->failure_kind(), "garbage");
  EXPECT_NE(m->failure().find("not JSON: 'sure, here is my answer!'"), std::string::npos)
      << m->failure();

  auto w = ExternalMechanism::Start(Misbehaving("wrongkey", "on_candidate"), t.config, nullptr,
                                    &kind, &err);
  ASSERT_TRUE(w) << err;
  CandidateView c;
  c.experiment_id = 4;
  EXPECT_FALSE(w->OnCandidate(t.View(), c).veto);
  EXPECT_NE(w->failure().find("unknown key 'vetoo'"), std::string::npos) << w->failure();
}

TEST(ExternalMechanism, ABadHelloOrAMissingProgramNeverStarts) {
  LoopConfig config;
  std::string kind, err;
  EXPECT_FALSE(ExternalMechanism::Start(Misbehaving("badhello"), config, nullptr, &kind, &err));
  EXPECT_EQ(kind, "garbage");
  EXPECT_NE(err.find("teleport"), std::string::npos) << err;
  EXPECT_FALSE(ExternalMechanism::Start(Misbehaving("nohooks"), config, nullptr, &kind, &err));
  EXPECT_EQ(kind, "garbage");
  EXPECT_FALSE(ExternalMechanism::Start(Spec("gone", {"/no/such/mechanism"}), config, nullptr,
                                        &kind, &err));
  EXPECT_EQ(kind, "crash");
  EXPECT_NE(err.find("/no/such/mechanism"), std::string::npos) << err;
}

TEST(MechanismCheck, AGoodMechanismPassesOnAMadeUpTrace) {
  const SearchSpace space = testing::SmallSpace();
  LoopConfig config;
  const CheckReport r = CheckMechanism(Spec("good", {"sh", kDir + "/good.sh"}), config, &space, {});
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_TRUE(r.synthetic);
  EXPECT_GT(r.calls.at("before_propose"), 0);
  EXPECT_GT(r.calls.at("on_candidate"), 0);
  EXPECT_GT(r.calls.at("on_result"), 0);
  EXPECT_NE(CheckReportJson(r).find("\"ok\": true"), std::string::npos);
}

TEST(MechanismCheck, EachMisbehaviourFailsTheCheckWithItsKind) {
  LoopConfig config;
  EXPECT_EQ(CheckMechanism(Misbehaving("crash", "on_result"), config, nullptr, {}).kind, "crash");
  EXPECT_EQ(CheckMechanism(Misbehaving("hang", "on_candidate", 0.3), config, nullptr, {}).kind,
            "hang");
  EXPECT_EQ(CheckMechanism(Misbehaving("garbage"), config, nullptr, {}).kind, "garbage");
  EXPECT_EQ(CheckMechanism(Misbehaving("badhello"), config, nullptr, {}).kind, "garbage");
  // A mechanism that only takes accept, on a recorded trace where every
  // candidate crashed: it is never called, and that fails the check too.
  Trace crashes;
  crashes.Baseline(10);
  for (int i = 0; i < 3; ++i) crashes.Add(Status::kCrash, std::nullopt);
  const CheckReport r = CheckMechanism(Misbehaving("silent"), crashes.config, nullptr,
                                       crashes.history);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.kind, "never_called");
  EXPECT_FALSE(r.synthetic);
  EXPECT_NE(r.reason.find("declares accept"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace ratchet
