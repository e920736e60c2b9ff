#include "propose/script_proposer.h"

#include <gtest/gtest.h>

#include "core/testing/fakes.h"
#include "propose/registry.h"
#include "store/ledger_files.h"
#include "vcs/file_state_guard.h"

namespace ratchet {
namespace {

class ScriptProposerTest : public ::testing::Test {
 protected:
  ScriptProposerTest() : repo(FileMap{{"x.txt", "1"}}), workspace(&repo) {
    deps.runner = &runner;
    deps.workspace = &workspace;
    deps.clock = &clock;
    deps.state_guards = FileStateGuard::Factory(&ledger_files);
    std::string err;
    EXPECT_TRUE(ParseLoopConfig(R"(
[edit]
files = ["x.txt"]
[run]
command = "true"
budget = 5
[metric]
name = "score"
goal = "max"
[propose]
kind = "script"
[propose.script]
command = "sh propose.sh"
timeout = "30s"
)" + extra_, "ratchet.toml", &config, &err)) << err;
  }

  ProposalRequest Request() {
    ProposalRequest r;
    r.experiment_id = 4;
    r.worktree = "/loop";
    r.run_dir = "/loop/.ratchet/runs/4";
    r.config = &config;
    r.history = &history;
    r.guidance = {"try smaller steps"};
    r.seed = 99;
    return r;
  }

  std::string extra_;
  FakeRepo repo;
  FakeWorkspace workspace;
  FakeRunner runner;
  FakeClock clock;
  LedgerFiles ledger_files;
  ProposerDeps deps;
  LoopConfig config;
  std::vector<Experiment> history;
};

TEST_F(ScriptProposerTest, RunsTheCommandAndTakesTheLastLine) {
  std::string err;
  auto proposer = CreateProposer("script", config, deps, &err);
  ASSERT_TRUE(proposer) << err;
  Experiment base;
  base.id = 1;
  base.status = Status::kKeep;
  base.metric = 0.5;
  base.description = "baseline";
  history.push_back(base);
  runner.handler = [](const RunSpec&) { return Exited(0, "thinking\nraise x to 2\n\n"); };
  std::vector<Experiment> in_flight(1);
  in_flight[0].id = 3;
  in_flight[0].description = "lower the learning rate";
  ProposalRequest request = Request();
  request.incumbent = &history[0];
  request.in_flight = &in_flight;
  request.sandbox.enabled = true;
  request.sandbox.home = "/loop/.ratchet/runs/4/home/propose";
  Proposal p = proposer->Propose(request);
  EXPECT_EQ(p.outcome, Proposal::Outcome::kCandidate);
  EXPECT_EQ(p.description, "raise x to 2");
  ASSERT_EQ(runner.calls.size(), 1u);
  const RunSpec& spec = runner.calls[0];
  EXPECT_EQ(FakeRunner::CommandOf(spec), "sh propose.sh");
  EXPECT_EQ(spec.cwd, "/loop");
  EXPECT_EQ(spec.timeout_s, 30);
  EXPECT_EQ(spec.log_path, "/loop/.ratchet/runs/4/propose.log");
  std::map<std::string, std::string> env(spec.env.begin(), spec.env.end());
  EXPECT_EQ(env["RATCHET_EXPERIMENT"], "4");
  EXPECT_EQ(env["RATCHET_SEED"], "99");
  EXPECT_EQ(env["RATCHET_GOAL"], "max");
  EXPECT_EQ(env["RATCHET_INCUMBENT_METRIC"], "0.5");
  EXPECT_EQ(env["RATCHET_GUIDANCE"], "try smaller steps\n");
  EXPECT_EQ(env["RATCHET_HISTORY"], "/loop/.ratchet/runs/4/history.json");
  EXPECT_NE(workspace.files[".ratchet/runs/4/history.json"].find("\"description\": \"baseline\""),
            std::string::npos);
  // What other workers are running, so the script does not repeat it.
  EXPECT_EQ(env["RATCHET_IN_FLIGHT"], "/loop/.ratchet/runs/4/in_flight.json");
  const std::string& flying = workspace.files[".ratchet/runs/4/in_flight.json"];
  EXPECT_NE(flying.find("\"description\": \"lower the learning rate\""), std::string::npos)
      << flying;
  EXPECT_EQ(flying.find("\"description\": \"baseline\""), std::string::npos) << flying;
  // It runs in the view the engine prepared for it, with a scratch home.
  EXPECT_TRUE(spec.sandbox.enabled);
  EXPECT_EQ(spec.sandbox.home, "/loop/.ratchet/runs/4/home/propose");
  EXPECT_EQ(env["GIT_CEILING_DIRECTORIES"], "/loop/.ratchet/work");
}

TEST_F(ScriptProposerTest, FailureAndTimeoutAreFailedProposals) {
  std::string err;
  auto proposer = CreateProposer("script", config, deps, &err);
  ASSERT_TRUE(proposer) << err;
  runner.handler = [](const RunSpec&) { return Exited(3, "oops"); };
  Proposal p = proposer->Propose(Request());
  EXPECT_EQ(p.outcome, Proposal::Outcome::kFailed);
  EXPECT_EQ(p.reason, "propose script exit 3 (log: .ratchet/runs/4/propose.log)");
  runner.handler = [](const RunSpec&) {
    RunResult r;
    r.end = RunResult::End::kTimedOut;
    r.wall_s = 30;
    return r;
  };
  p = proposer->Propose(Request());
  EXPECT_EQ(p.outcome, Proposal::Outcome::kFailed);
  EXPECT_NE(p.reason.find("timed out after 30.0s"), std::string::npos) << p.reason;
}

TEST(RegistryTest, UnknownKindAndBadSection) {
  LoopConfig config;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(R"(
[edit]
files = ["x"]
[run]
command = "true"
budget = 5
[metric]
name = "s"
goal = "max"
[propose]
kind = "script"
[propose.script]
comand = "typo"
)", "ratchet.toml", &config, &err)) << err;
  EXPECT_FALSE(CreateProposer("serch", config, {}, &err));
  EXPECT_NE(err.find("unknown proposer 'serch'; known: "), std::string::npos) << err;
  EXPECT_FALSE(CreateProposer("script", config, {}, &err));
  EXPECT_NE(err.find("[propose.script] command: missing"), std::string::npos) << err;
}

TEST(LastLineTest, Forms) {
  EXPECT_EQ(LastLine("a\nb\n"), "b");
  EXPECT_EQ(LastLine("  only  \n\n\n"), "only");
  EXPECT_EQ(LastLine(""), "");
}

}  // namespace
}  // namespace ratchet
