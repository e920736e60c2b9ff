#include "core/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "core/testing/fakes.h"

namespace ratchet {
namespace {

// [run] comes last so a test can add keys to it.
const char* kConfig = R"(
[edit]
files = ["x.txt", "src/*.c"]
protected = ["run.sh", "data/"]
[metric]
name = "score"
goal = "min"
[run]
command = "sh run.sh"
budget = "10s"
timeout = "30s"
)";

// A loop on fakes. The "run" scores (x - 7)^2 from x.txt; the proposer
// writes the next value from `values` into x.txt.
class EngineTest : public ::testing::Test {
 protected:
  EngineTest() : repo({{"x.txt", "1"}, {"run.sh", "score it"}, {"src/a.c", "int a;"}}),
                 workspace(&repo) {
    workspace.ignored["data/train.bin"] = "bytes";
    runner.handler = [this](const RunSpec& spec) { return Score(spec); };
    proposer.edit = [this](const ProposalRequest&) {
      Proposal p;
      p.outcome = Proposal::Outcome::kCandidate;
      if (edits.empty()) {
        p.outcome = Proposal::Outcome::kNoChange;
        return p;
      }
      auto edit = edits.front();
      edits.pop_front();
      p.description = edit();
      return p;
    };
  }

  RunResult Score(const RunSpec& spec) {
    std::string command = FakeRunner::CommandOf(spec);
    if (command != "sh run.sh") return special.count(command) ? special[command](spec) : Exited(0, "");
    clock.Advance(10);
    if (run_override) return run_override(spec);
    double x = std::stod(repo.worktree.at("x.txt"));
    return Exited(0, "training...\n---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n");
  }

  // Queues a proposal that sets x.txt to `value`.
  void Propose(double value) {
    edits.push_back([this, value] {
      repo.worktree["x.txt"] = std::to_string(value);
      return "x=" + std::to_string(value);
    });
  }
  void ProposeEdit(std::function<std::string()> edit) { edits.push_back(std::move(edit)); }

  LoopConfig Config(const std::string& extra = "") {
    LoopConfig c;
    std::string err;
    EXPECT_TRUE(ParseLoopConfig(std::string(kConfig) + extra, "ratchet.toml", &c, &err)) << err;
    return c;
  }

  EngineDeps Deps() {
    EngineDeps d;
    d.clock = &clock;
    d.runner = &runner;
    d.repo = &repo;
    d.workspace = &workspace;
    d.ledger = &ledger;
    d.proposer = &proposer;
    d.interrupts = &interrupts;
    d.cancel = &cancel;
    d.hooks = hooks_enabled ? &hooks : nullptr;
    return d;
  }

  StopSummary RunLoop(const std::string& extra,
                      std::function<void(LoopConfig*)> adjust = nullptr) {
    LoopConfig config = Config(extra);
    if (adjust) adjust(&config);
    Engine engine(config, Deps());
    std::string err;
    EXPECT_TRUE(engine.Preflight(&err)) << err;
    StopSummary summary;
    EXPECT_TRUE(engine.Run(&summary, &err)) << err;
    return summary;
  }

  Status StatusOf(int id) { return ledger.experiments.at(id - 1).status; }
  const Experiment& Exp(int id) { return ledger.experiments.at(id - 1); }
  std::string Tip() { return repo.refs["refs/heads/ratchet/main"]; }

  FakeClock clock;
  FakeRepo repo;
  FakeWorkspace workspace;
  FakeRunner runner;
  FakeLedger ledger;
  FakeProposer proposer;
  HookSet hooks;
  bool hooks_enabled = false;
  std::atomic<int> interrupts{0};
  std::atomic<bool> cancel{false};
  std::deque<std::function<std::string()>> edits;
  std::function<RunResult(const RunSpec&)> run_override;
  std::map<std::string, std::function<RunResult(const RunSpec&)>> special;
};

TEST_F(EngineTest, BaselineThenKeepAndDiscard) {
  Propose(3);  // 16: better than 36
  Propose(0);  // 49: worse
  Propose(6);  // 1: better
  StopSummary summary = RunLoop("[stop]\nmax_experiments = 4\n");
  EXPECT_EQ(summary.reason, "reached stop.max_experiments (4)");
  ASSERT_EQ(ledger.experiments.size(), 4u);
  EXPECT_TRUE(Exp(1).baseline);
  EXPECT_EQ(StatusOf(1), Status::kKeep);
  EXPECT_EQ(*Exp(1).metric, 36);
  EXPECT_EQ(StatusOf(2), Status::kKeep);
  EXPECT_EQ(StatusOf(3), Status::kDiscard);
  EXPECT_EQ(StatusOf(4), Status::kKeep);
  // The branch holds exactly the kept commits, newest first, then the start.
  EXPECT_EQ(repo.Log("refs/heads/ratchet/main"),
            (std::vector<std::string>{Exp(4).candidate_commit, Exp(2).candidate_commit, "c0"}));
  EXPECT_EQ(repo.branch, "ratchet/main");
  EXPECT_EQ(repo.worktree.at("x.txt"), std::to_string(6.0));
  // The discarded candidate stays reachable.
  EXPECT_EQ(repo.refs["refs/ratchet/tried/3"], Exp(3).candidate_commit);
  EXPECT_EQ(Exp(3).parent_commit, Exp(2).candidate_commit);
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->id, 4);
  // Every experiment went through the phases in order, ending done.
  for (const Experiment& e : ledger.experiments) {
    EXPECT_EQ(e.phase, Phase::kDone);
    const auto& p = ledger.phases[e.id];
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end())) << e.id;
  }
  // Runs get the workload protocol's environment.
  const RunSpec& run = runner.calls.back();
  auto env = std::map<std::string, std::string>(run.env.begin(), run.env.end());
  EXPECT_EQ(env["RATCHET_BUDGET_SECONDS"], "10");
  EXPECT_EQ(env["RATCHET_EXPERIMENT"], "4");
  EXPECT_EQ(env["RATCHET_RUN_DIR"], "/loop/.ratchet/runs/4");
  EXPECT_EQ(run.timeout_s, 30);
  EXPECT_NE(workspace.files[".ratchet/notes.md"].find("- #3 discard score=49"), std::string::npos);
}

TEST_F(EngineTest, StopsAtTarget) {
  Propose(5);  // 4
  Propose(7);  // 0
  Propose(8);
  StopSummary summary = RunLoop("[stop]\ntarget = 0.5\n");
  EXPECT_EQ(ledger.experiments.size(), 3u);
  EXPECT_NE(summary.reason.find("reached stop.target 0.5: score 0 at #3"), std::string::npos)
      << summary.reason;
}

TEST_F(EngineTest, OutOfScopeEditsAreRevertedAndNotRun) {
  ProposeEdit([this] {
    repo.worktree["run.sh"] = "print 0";  // protected
    return "cheat";
  });
  ProposeEdit([this] {
    repo.worktree["notes.txt"] = "new file";  // outside edit.files
    return "stray file";
  });
  ProposeEdit([this] {
    repo.worktree.erase("x.txt");  // named literally in edit.files
    return "delete";
  });
  ProposeEdit([this] {
    workspace.ignored["data/train.bin"] = "poisoned";  // protected, git-ignored
    repo.worktree["x.txt"] = "6";
    return "poison data";
  });
  StopSummary summary = RunLoop("[stop]\nmax_experiments = 5\n");
  EXPECT_EQ(StatusOf(2), Status::kOutOfScope);
  EXPECT_EQ(Exp(2).reason, "changed protected file run.sh");
  EXPECT_EQ(StatusOf(3), Status::kOutOfScope);
  EXPECT_EQ(Exp(3).reason, "created notes.txt, which is not in edit.files");
  EXPECT_EQ(StatusOf(4), Status::kOutOfScope);
  EXPECT_NE(Exp(4).reason.find("deleted x.txt"), std::string::npos);
  EXPECT_EQ(StatusOf(5), Status::kOutOfScope);
  EXPECT_EQ(Exp(5).reason, "protected file data/train.bin changed");
  // Only the baseline ran the experiment command.
  int runs = 0;
  for (const RunSpec& s : runner.calls) runs += FakeRunner::CommandOf(s) == "sh run.sh";
  EXPECT_EQ(runs, 1);
  // The tree is back at the baseline; the candidates are kept as refs.
  EXPECT_EQ(repo.worktree, repo.commits["c0"]);
  EXPECT_EQ(repo.commits[repo.refs["refs/ratchet/tried/2"]].at("run.sh"), "print 0");
  // Git cannot restore an ignored file, so the loop stops and says why.
  EXPECT_NE(summary.reason.find("protected file data/train.bin changed"), std::string::npos)
      << summary.reason;
}

TEST_F(EngineTest, EditsByGlobAreInScope) {
  ProposeEdit([this] {
    repo.worktree["src/a.c"] = "int a = 1;";
    repo.worktree["src/b.c"] = "int b;";
    return "two files";
  });
  RunLoop("[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(2), Status::kDiscard);  // ran; same score
  EXPECT_EQ(Exp(2).files_changed, (std::vector<std::string>{"src/a.c", "src/b.c"}));
}

TEST_F(EngineTest, RunFailuresAreRecordedWithTheirReason) {
  std::deque<RunResult> results;
  results.push_back(Exited(0, "---\nscore: 36\n"));             // baseline
  results.push_back(Exited(1, "---\nscore: 0.5\n"));            // good metric, then exit 1
  results.push_back(Exited(0, "---\nscore: nan\n"));            // NaN
  results.push_back(Exited(0, "all done\n"));                   // no metric
  RunResult timeout;
  timeout.end = RunResult::End::kTimedOut;
  results.push_back(timeout);
  RunResult killed;
  killed.end = RunResult::End::kSignaled;
  killed.signal = 9;
  results.push_back(killed);
  run_override = [&](const RunSpec&) {
    RunResult r = results.front();
    results.pop_front();
    return r;
  };
  for (int i = 0; i < 5; ++i) Propose(2 + i);
  RunLoop("[stop]\nmax_experiments = 6\n");
  EXPECT_EQ(StatusOf(2), Status::kCrash);
  EXPECT_EQ(Exp(2).reason, "exit 1 after printing score: 0.5");
  EXPECT_EQ(StatusOf(3), Status::kCrash);
  EXPECT_EQ(Exp(3).reason, "score is nan");
  EXPECT_FALSE(Exp(3).metric.has_value());
  EXPECT_EQ(StatusOf(4), Status::kCrash);
  EXPECT_NE(Exp(4).reason.find("no score in the output"), std::string::npos);
  EXPECT_EQ(StatusOf(5), Status::kTimeout);
  EXPECT_EQ(Exp(5).reason, "killed at run.timeout (30s)");
  EXPECT_EQ(StatusOf(6), Status::kCrash);
  EXPECT_NE(Exp(6).reason.find("signal 9"), std::string::npos);
  EXPECT_EQ(repo.worktree.at("x.txt"), "1");
  EXPECT_EQ(Tip(), "c0");
}

TEST_F(EngineTest, ProposerOutcomes) {
  edits.push_back([] { return std::string("nothing"); });  // edits nothing
  proposer.edit = [this, inner = proposer.edit](const ProposalRequest& r) {
    if (proposer.calls == 2) {
      Proposal p;
      p.outcome = Proposal::Outcome::kFailed;
      p.reason = "script exited 3";
      return p;
    }
    return inner(r);
  };
  RunLoop("[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(2), Status::kNoChange);
  EXPECT_EQ(StatusOf(3), Status::kProposeFailed);
  EXPECT_EQ(Exp(3).reason, "script exited 3");
}

TEST_F(EngineTest, BuildAndGates) {
  special["make"] = [](const RunSpec&) { return Exited(2, "error: x"); };
  special["./check"] = [](const RunSpec&) { return Exited(0, ""); };
  Propose(5);
  // The build passes for the baseline and fails for the candidate.
  int builds = 0;
  special["make"] = [&](const RunSpec&) { return Exited(builds++ == 0 ? 0 : 2, ""); };
  RunLoop("build = \"make\"\n[[gate]]\nname = \"check\"\ncommand = \"./check\"\n"
          "[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(1), Status::kKeep);
  EXPECT_EQ(StatusOf(2), Status::kCrash);
  EXPECT_EQ(Exp(2).reason, "build failed: exit 2 (log: .ratchet/runs/2/build.log)");
}

TEST_F(EngineTest, FailingGate) {
  int gates = 0;
  special["./gradcheck"] = [&](const RunSpec&) { return Exited(gates++ == 0 ? 0 : 1, ""); };
  Propose(5);
  RunLoop("[[gate]]\nname = \"grad\"\ncommand = \"./gradcheck\"\n[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(2), Status::kGateFailed);
  EXPECT_EQ(Exp(2).reason, "gate grad failed: exit 1 (log: .ratchet/runs/2/gate-grad.log)");
}

TEST_F(EngineTest, ConstraintViolationIsDiscarded) {
  run_override = [this](const RunSpec&) {
    double x = std::stod(repo.worktree.at("x.txt"));
    return Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) +
                         "\nmem_mb: " + std::to_string(x * 1000) + "\n");
  };
  Propose(6);  // better score, mem 6000 > 5000
  RunLoop("[stop]\nmax_experiments = 2\n", [](LoopConfig* c) {
    Constraint constraint;
    std::string err;
    ASSERT_TRUE(ParseConstraint("mem_mb <= 5000", &constraint, &err));
    c->constraints.push_back(constraint);
  });
  EXPECT_EQ(StatusOf(2), Status::kDiscard);
  EXPECT_EQ(Exp(2).reason, "violates constraint mem_mb <= 5000 (6000)");
}

TEST_F(EngineTest, MinDeltaAndNoise) {
  // Baseline repeats measure the noise; a candidate must beat it when confirmed.
  std::deque<double> scores = {10.0, 10.2, 9.8,   // baseline x3: mean 10, sd 0.2
                               9.5, 9.9, 10.1,    // would-be keep, then within noise
                               9.0, 9.1, 8.9};    // clearly better
  run_override = [&](const RunSpec&) {
    double s = scores.front();
    scores.pop_front();
    return Exited(0, "---\nscore: " + std::to_string(s) + "\n");
  };
  Propose(2);
  Propose(3);
  RunLoop("[accept]\nbaseline_repeats = 3\nconfirm = 2\nmin_delta = 0.1\n"
          "[stop]\nmax_experiments = 3\n");
  EXPECT_NEAR(*Exp(1).metric, 10.0, 1e-9);
  EXPECT_NEAR(Exp(1).metric_stddev, 0.2, 1e-9);
  EXPECT_EQ(Exp(1).metric_n, 3);
  EXPECT_EQ(StatusOf(2), Status::kDiscard);
  EXPECT_NE(Exp(2).reason.find("within noise"), std::string::npos) << Exp(2).reason;
  EXPECT_EQ(Exp(2).metric_n, 3);
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_EQ(ledger.runs.size(), 9u);
  EXPECT_EQ(ledger.runs[1].purpose, "baseline_repeat");
  EXPECT_EQ(ledger.runs[4].purpose, "confirm");
  // Repeats use other seeds.
  EXPECT_NE(ledger.meta["noise_sigma"], "");
}

TEST_F(EngineTest, SingleCtrlCFinishesTheExperimentThenStops) {
  Propose(5);
  Propose(6);
  run_override = [&](const RunSpec&) {
    interrupts = 1;  // pressed during the baseline run
    return Exited(0, "---\nscore: 36\n");
  };
  StopSummary summary = RunLoop("");
  EXPECT_EQ(ledger.experiments.size(), 1u);
  EXPECT_EQ(StatusOf(1), Status::kKeep);
  EXPECT_EQ(summary.reason, "stopped by the user (Ctrl-C)");
}

TEST_F(EngineTest, SecondCtrlCInterruptsTheRunAndRestores) {
  Propose(5);
  int n = 0;
  run_override = [&](const RunSpec& spec) {
    if (n++ == 0) return Exited(0, "---\nscore: 36\n");
    EXPECT_EQ(spec.cancel, &cancel);
    interrupts = 2;
    cancel = true;
    RunResult r;
    r.end = RunResult::End::kCancelled;
    return r;
  };
  StopSummary summary = RunLoop("");
  EXPECT_EQ(StatusOf(2), Status::kInterrupted);
  EXPECT_EQ(repo.worktree.at("x.txt"), "1");
  EXPECT_NE(summary.reason.find("Ctrl-C"), std::string::npos);
}

TEST_F(EngineTest, BaselineFailureStops) {
  run_override = [](const RunSpec&) { return Exited(0, "no metric\n"); };
  StopSummary summary = RunLoop("");
  EXPECT_EQ(ledger.experiments.size(), 1u);
  EXPECT_NE(summary.reason.find("the baseline failed (crash"), std::string::npos);
  EXPECT_EQ(proposer.calls, 0);
}

TEST_F(EngineTest, PatienceAndCircuitBreaker) {
  for (int i = 0; i < 5; ++i) Propose(0);  // all worse
  StopSummary summary = RunLoop("[stop]\npatience = 3\n");
  EXPECT_EQ(ledger.experiments.size(), 4u);
  EXPECT_EQ(summary.reason, "stop.patience: 3 experiments without a new best");
}

TEST_F(EngineTest, CircuitBreaker) {
  run_override = [n = 0](const RunSpec&) mutable {
    return n++ == 0 ? Exited(0, "---\nscore: 1\n") : Exited(1, "boom");
  };
  for (int i = 0; i < 5; ++i) Propose(i + 2);
  StopSummary summary = RunLoop("[stop]\nconsecutive_failures = 2\n");
  EXPECT_EQ(ledger.experiments.size(), 3u);
  EXPECT_NE(summary.reason.find("circuit breaker: 2 failed experiments in a row"),
            std::string::npos);
}

// Recovery: a ledger left by a ratchet killed mid-experiment.
TEST_F(EngineTest, ResumeMarksAnUnfinishedExperimentInterrupted) {
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 1\n");
  // Simulate a kill while #2 was running: row in "running", tree edited.
  repo.worktree["x.txt"] = "4";
  std::string sha;
  std::string err;
  repo.CommitWorktree("c0", "candidate", &sha, &err);
  Experiment e;
  e.id = 2;
  e.phase = Phase::kRunning;
  e.parent_commit = "c0";
  e.candidate_commit = sha;
  ledger.InsertExperiment(e, &err);
  edits.clear();
  Propose(6);
  Engine engine(Config("[stop]\nmax_experiments = 3\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;  // a dirty tree is expected here
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(StatusOf(2), Status::kInterrupted);
  EXPECT_EQ(Exp(2).reason, "ratchet stopped while the experiment was running");
  EXPECT_EQ(StatusOf(3), Status::kKeep);
  EXPECT_EQ(Exp(3).parent_commit, "c0");
  EXPECT_EQ(ledger.sessions.size(), 2u);
}

TEST_F(EngineTest, ResumeFinishesADecidedKeep) {
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 1\n");
  repo.worktree["x.txt"] = "5";
  std::string sha, err;
  repo.CommitWorktree("c0", "candidate", &sha, &err);
  Experiment e;
  e.id = 2;
  e.phase = Phase::kDecided;
  e.status = Status::kKeep;
  e.metric = 4;
  e.parent_commit = "c0";
  e.candidate_commit = sha;
  ledger.InsertExperiment(e, &err);  // killed before the branch moved
  Engine engine(Config("[stop]\nmax_experiments = 2\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(Tip(), sha);
  EXPECT_EQ(Exp(2).phase, Phase::kDone);
}

TEST_F(EngineTest, PreflightRefusesADirtyTreeAndAMovedBranch) {
  repo.worktree["x.txt"] = "dirty";
  Engine engine(Config(), Deps());
  std::string err;
  EXPECT_FALSE(engine.Preflight(&err));
  EXPECT_NE(err.find("uncommitted changes (x.txt)"), std::string::npos) << err;

  repo.worktree["x.txt"] = "1";
  RunLoop("[stop]\nmax_experiments = 1\n");
  repo.refs["refs/heads/ratchet/main"] = "c99";
  Engine again(Config(), Deps());
  EXPECT_FALSE(again.Preflight(&err));
  EXPECT_NE(err.find("was it moved by hand?"), std::string::npos) << err;
}

TEST_F(EngineTest, ProtectedFileChangedBetweenSessionsIsRefused) {
  RunLoop("[stop]\nmax_experiments = 1\n");
  workspace.ignored["data/train.bin"] = "other";
  Engine engine(Config(), Deps());
  std::string err;
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  EXPECT_FALSE(engine.Run(&summary, &err));
  EXPECT_NE(err.find("protected file data/train.bin changed since the loop began"),
            std::string::npos)
      << err;
}

class CountingMechanism : public Mechanism {
 public:
  std::string name() const override { return "veto-odd"; }
  std::vector<Hook> hooks() const override { return {Hook::kOnCandidate, Hook::kOnResult}; }
  CandidateVerdict OnCandidate(const LoopView&, const CandidateView& c) override {
    CandidateVerdict v;
    v.veto = c.experiment_id % 2 == 1;
    v.reason = "odd experiments are tabu";
    return v;
  }
  void OnResult(const LoopView&, const Experiment&) override { ++results; }
  int results = 0;
};

TEST_F(EngineTest, MechanismsAreCalledCountedAndRecorded) {
  hooks_enabled = true;
  auto mechanism = std::make_shared<CountingMechanism>();
  hooks.Add(mechanism);
  Propose(5);
  Propose(6);
  RunLoop("[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(2), Status::kKeep);
  EXPECT_EQ(StatusOf(3), Status::kRejected);
  EXPECT_EQ(Exp(3).reason, "odd experiments are tabu");
  EXPECT_EQ(Exp(3).mechanisms, (std::vector<std::string>{"veto-odd"}));
  EXPECT_EQ(mechanism->results, 3);
  EXPECT_EQ((ledger.mechanism_calls[{"veto-odd", "on_candidate"}]), 2);
  EXPECT_EQ((ledger.mechanism_calls[{"veto-odd", "on_result"}]), 3);
}

}  // namespace
}  // namespace ratchet
