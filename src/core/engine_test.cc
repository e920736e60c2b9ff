#include "core/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <set>

#include "core/steering.h"
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
[sandbox]
required = false
[run]
command = "sh run.sh"
budget = "10s"
timeout = "30s"
)";

// `ratchet rerun` requests, handed out when `ready` says so.
class FakeSteering : public Steering {
 public:
  std::vector<std::string> Guidance() override { return {}; }
  bool Paused(const std::function<void(const std::string&)>&) override { return false; }
  bool TakeRerun(RerunRequest* request) override {
    if (reruns.empty() || (ready && !ready())) return false;
    *request = reruns.front();
    reruns.pop_front();
    ++taken;
    return true;
  }
  std::deque<RerunRequest> reruns;
  std::function<bool()> ready;
  int taken = 0;
};

std::string EnvValue(const RunSpec& spec, const std::string& name) {
  for (const auto& [k, v] : spec.env)
    if (k == name) return v;
  return "";
}

// A loop on fakes. The "run" scores (x - 7)^2 from x.txt of its working
// copy; the proposer writes the next value from `values` into x.txt of its.
class EngineTest : public ::testing::Test {
 protected:
  EngineTest()
      : repo({{"x.txt", "1"}, {"run.sh", "score it"}, {"src/a.c", "int a;"}}),
        workspace(&repo),
        steps(&clock) {
    workspace.ignored["data/train.bin"] = "bytes";
    steps.handler = [this](const RunSpec& spec) { return Score(spec); };
    proposer.edit = [this](const ProposalRequest& request) {
      Proposal p;
      p.outcome = Proposal::Outcome::kCandidate;
      requests.push_back(request.experiment_id);
      if (edits.empty()) {
        p.outcome = Proposal::Outcome::kNoChange;
        return p;
      }
      auto edit = edits.front();
      edits.pop_front();
      p.description = edit(&repo.copies[request.worktree]);
      return p;
    };
  }

  RunResult Score(const RunSpec& spec) {
    std::string command = FakeRunner::CommandOf(spec);
    if (command != "sh run.sh") return special.count(command) ? special[command](spec) : Exited(0, "");
    if (run_override) return run_override(spec);
    double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    return Exited(0, "training...\n---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", 10);
  }

  // Queues a proposal that sets x.txt to `value`.
  void Propose(double value) {
    edits.push_back([value](FileMap* copy) {
      (*copy)["x.txt"] = std::to_string(value);
      return "x=" + std::to_string(value);
    });
  }
  void ProposeEdit(std::function<std::string(FileMap*)> edit) { edits.push_back(std::move(edit)); }

  LoopConfig Config(const std::string& extra = "") {
    LoopConfig c;
    std::string err;
    EXPECT_TRUE(ParseLoopConfig(std::string(kConfig) + extra, "ratchet.toml", &c, &err)) << err;
    return c;
  }

  EngineDeps Deps() {
    EngineDeps d;
    d.clock = &clock;
    d.steps = &steps;
    d.repo = &repo;
    d.workspace = &workspace;
    d.ledger = &ledger;
    d.proposer = &proposer;
    d.interrupts = &interrupts;
    d.cancel = &cancel;
    d.hooks = hooks_enabled ? &hooks : nullptr;
    d.steering = &steering;
    d.sandbox_available = sandbox_available;
    d.sandbox_why = "no bwrap in the fakes";
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

  // A candidate (x.txt = x, parent c0) that a killed session left in
  // `phase` with the runs of `purposes` recorded (each scoring `metric`,
  // default (x - 7)^2), its working copy in place and its step `step` still
  // on the executor. `adjust` changes its row first. Returns its id.
  int KilledAt(Phase phase, int x, const std::string& step,
               const std::vector<std::string>& purposes = {},
               std::optional<double> metric = std::nullopt,
               const std::function<void(Experiment*)>& adjust = nullptr) {
    CopyScan scan;
    scan.base = "c0";
    scan.changes = {{FileChange::Kind::kModified, "x.txt"}};
    scan.contents["x.txt"] = {std::to_string(x), false};
    std::string sha, err;
    repo.CommitScan(scan, "candidate", &sha, &err);
    Experiment e;
    e.phase = phase;
    e.parent_commit = "c0";
    e.candidate_commit = sha;
    e.proposer = "script";
    if (adjust) adjust(&e);
    EXPECT_TRUE(ledger.InsertExperiment(&e, &err)) << err;
    for (size_t k = 0; k < purposes.size(); ++k) {
      RunRecord r;
      r.experiment_id = e.id;
      r.attempt = static_cast<int>(k) + 1;
      r.purpose = purposes[k];
      r.metric = metric.value_or((x - 7.0) * (x - 7.0));
      r.metrics["score"] = *r.metric;
      ledger.AddRun(r, &err);
    }
    repo.copies["/loop/.ratchet/work/" + std::to_string(e.id)] = repo.commits[sha];
    steps.reattachable.insert("/loop/.ratchet/runs/" + std::to_string(e.id) + "/" + step + ".log");
    return e.id;
  }
  // The log names of the steps started since call `from`, by experiment.
  std::map<int, std::vector<std::string>> StartedSince(size_t from) {
    std::map<int, std::vector<std::string>> started;
    for (size_t i = from; i < steps.calls.size(); ++i)
      started[std::stoi(EnvValue(steps.calls[i], "RATCHET_EXPERIMENT"))].push_back(
          steps.calls[i].log_path.substr(steps.calls[i].log_path.rfind('/') + 1));
    return started;
  }
  // A new session on `config` after the killed one: the log names of the
  // steps it started, by experiment.
  std::map<int, std::vector<std::string>> Resume(const LoopConfig& config) {
    const size_t calls_before = steps.calls.size();
    Engine engine(config, Deps());
    std::string err;
    EXPECT_TRUE(engine.Preflight(&err)) << err;
    StopSummary summary;
    EXPECT_TRUE(engine.Run(&summary, &err)) << err;
    return StartedSince(calls_before);
  }
  // Each experiment's runs in the ledger: "attempt purpose".
  std::map<int, std::vector<std::string>> Attempts() {
    std::map<int, std::vector<std::string>> attempts;
    for (const RunRecord& r : ledger.runs)
      attempts[r.experiment_id].push_back(std::to_string(r.attempt) + " " + r.purpose);
    return attempts;
  }

  Status StatusOf(int id) { return ledger.experiments.at(id - 1).status; }
  const Experiment& Exp(int id) { return ledger.experiments.at(id - 1); }
  std::string Tip() { return repo.refs["refs/heads/ratchet/main"]; }
  int RunsOf(const std::string& command) {
    int n = 0;
    for (const RunSpec& s : steps.calls) n += FakeRunner::CommandOf(s) == command;
    return n;
  }

  FakeClock clock;
  FakeRepo repo;
  FakeWorkspace workspace;
  FakeStepRunner steps;
  FakeLedger ledger;
  FakeProposer proposer;
  HookSet hooks;
  FakeSteering steering;
  bool hooks_enabled = false;
  bool sandbox_available = false;
  std::atomic<int> interrupts{0};
  std::atomic<bool> cancel{false};
  std::deque<std::function<std::string(FileMap*)>> edits;
  std::vector<int> requests;
  std::function<RunResult(const RunSpec&)> run_override;
  std::map<std::string, std::function<RunResult(const RunSpec&)>> special;
};

TEST_F(EngineTest, BaselineThenKeepAndDiscard) {
  Propose(3);  // 16: better than 36
  Propose(0);  // 49: worse
  Propose(6);  // 1: better
  StopSummary summary = RunLoop("[stop]\nmax_experiments = 4\n");
  EXPECT_EQ(summary.reason, "reached stop.max_experiments (4)");
  EXPECT_EQ(summary.kind, StopKind::kRule);
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
  EXPECT_EQ(repo.worktree.at("x.txt"), std::to_string(6.0)) << "the loop directory is the best";
  // The discarded candidate stays reachable; no working copy is left.
  EXPECT_EQ(repo.refs["refs/ratchet/tried/3"], Exp(3).candidate_commit);
  EXPECT_EQ(Exp(3).parent_commit, Exp(2).candidate_commit);
  EXPECT_TRUE(repo.copies.empty());
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.best->id, 4);
  // Every experiment went through the phases in order, ending done.
  for (const Experiment& e : ledger.experiments) {
    EXPECT_EQ(e.phase, Phase::kDone);
    const auto& p = ledger.phases[e.id];
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end())) << e.id;
  }
  // Runs get the workload protocol's environment, in their own copy.
  const RunSpec& run = steps.calls.back();
  auto env = std::map<std::string, std::string>(run.env.begin(), run.env.end());
  EXPECT_EQ(env["RATCHET_BUDGET_SECONDS"], "10");
  EXPECT_EQ(env["RATCHET_EXPERIMENT"], "4");
  EXPECT_EQ(env["RATCHET_RUN_DIR"], "/loop/.ratchet/runs/4/out");
  EXPECT_EQ(env["RATCHET_SLOT"], "0");
  EXPECT_EQ(run.cwd, "/loop/.ratchet/work/4");
  EXPECT_EQ(run.timeout_s, 30);
  EXPECT_NE(workspace.files[".ratchet/notes.md"].find("- #3 discard score=49"), std::string::npos);
  // Measured by ratchet, not printed by the run.
  EXPECT_EQ(Exp(4).metrics.at("run.wall_s"), 10);
  // Without the sandbox, every row says so.
  ASSERT_EQ(Exp(2).warnings.size(), 1u);
  EXPECT_NE(Exp(2).warnings[0].find("ran without the sandbox"), std::string::npos);
}

TEST_F(EngineTest, StopsAtTarget) {
  Propose(5);  // 4
  Propose(7);  // 0
  Propose(8);
  StopSummary summary = RunLoop("[stop]\ntarget = 0.5\n");
  EXPECT_EQ(ledger.experiments.size(), 3u);
  EXPECT_EQ(summary.kind, StopKind::kTarget);
  EXPECT_NE(summary.reason.find("reached stop.target 0.5: score 0 at #3"), std::string::npos)
      << summary.reason;
}

TEST_F(EngineTest, OutOfScopeEditsAreRefusedAndNotRun) {
  ProposeEdit([](FileMap* c) {
    (*c)["run.sh"] = "print 0";  // protected
    return "cheat";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["build/train"] = "planted binary";  // outside edit.files (an ignored path, say)
    return "stray file";
  });
  ProposeEdit([](FileMap* c) {
    c->erase("x.txt");  // named literally in edit.files
    return "delete";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "symlink:/loop/.ratchet/ledger.db";  // an editable file made a link
    return "link";
  });
  ProposeEdit([this](FileMap* c) {
    workspace.ignored["data/train.bin"] = "poisoned";  // protected, in the loop directory
    (*c)["x.txt"] = "6";
    return "poison data";
  });
  StopSummary summary = RunLoop("[stop]\nmax_experiments = 6\n");
  EXPECT_EQ(StatusOf(2), Status::kOutOfScope);
  EXPECT_EQ(Exp(2).reason, "changed protected file run.sh");
  EXPECT_EQ(StatusOf(3), Status::kOutOfScope);
  EXPECT_EQ(Exp(3).reason, "created build/train, which is not in edit.files");
  EXPECT_EQ(StatusOf(4), Status::kOutOfScope);
  EXPECT_NE(Exp(4).reason.find("deleted x.txt"), std::string::npos);
  EXPECT_EQ(StatusOf(5), Status::kOutOfScope);
  EXPECT_NE(Exp(5).reason.find("x.txt is a symbolic link (to /loop/.ratchet/ledger.db)"),
            std::string::npos)
      << Exp(5).reason;
  EXPECT_EQ(StatusOf(6), Status::kOutOfScope);
  EXPECT_EQ(Exp(6).reason, "protected file data/train.bin changed");
  EXPECT_EQ(RunsOf("sh run.sh"), 1) << "only the baseline ran";
  EXPECT_EQ(repo.worktree, repo.commits["c0"]);
  EXPECT_EQ(repo.commits[repo.refs["refs/ratchet/tried/2"]].at("run.sh"), "print 0");
  EXPECT_EQ(summary.kind, StopKind::kCircuitBreaker);
  EXPECT_NE(summary.reason.find("protected file data/train.bin changed"), std::string::npos)
      << summary.reason;
}

TEST_F(EngineTest, EveryCandidateIsBuiltFromExactlyItsCommit) {
  // The proposer leaves an untracked build output in its copy beside an
  // in-scope edit: refused, never built.
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "5";
    return "edit";
  });
  std::vector<FileMap> built;
  special["make"] = [&](const RunSpec& spec) {
    built.push_back(repo.copies.at(spec.cwd));
    return Exited(0, "");
  };
  RunLoop("build = \"make\"\n[stop]\nmax_experiments = 2\n");
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[1], repo.commits[Exp(2).candidate_commit]);
}

TEST_F(EngineTest, EditsByGlobAreInScope) {
  ProposeEdit([](FileMap* c) {
    (*c)["src/a.c"] = "int a = 1;";
    (*c)["src/b.c"] = "int b;";
    return "two files";
  });
  RunLoop("[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(2), Status::kDiscard);  // ran; same score
  EXPECT_EQ(Exp(2).files_changed, (std::vector<std::string>{"src/a.c", "src/b.c"}));
}

TEST_F(EngineTest, RunFailuresAreRecordedWithTheirReason) {
  std::deque<RunResult> results;
  results.push_back(Exited(0, "---\nscore: 36\n"));   // baseline
  results.push_back(Exited(1, "---\nscore: 0.5\n"));  // good metric, then exit 1
  results.push_back(Exited(0, "---\nscore: nan\n"));  // NaN
  results.push_back(Exited(0, "all done\n"));         // no metric
  RunResult timeout;
  timeout.end = RunResult::End::kTimedOut;
  results.push_back(timeout);
  RunResult killed;
  killed.end = RunResult::End::kSignaled;
  killed.signal = 9;
  results.push_back(killed);
  RunResult oom;
  oom.end = RunResult::End::kLimit;
  oom.limit = RunResult::Limit::kMemory;
  results.push_back(oom);
  run_override = [&](const RunSpec&) {
    RunResult r = results.front();
    results.pop_front();
    return r;
  };
  for (int i = 0; i < 6; ++i) Propose(2 + i);
  RunLoop("[stop]\nmax_experiments = 7\n");
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
  EXPECT_EQ(StatusOf(7), Status::kCrash);
  EXPECT_EQ(Exp(7).reason, "killed by the kernel: memory limit exceeded");
  EXPECT_EQ(repo.worktree.at("x.txt"), "1");
  EXPECT_EQ(Tip(), "c0");
}

TEST_F(EngineTest, TrainingTimeIsRatchetsClock) {
  Propose(5);
  RunLoop("overhead = \"5s\"\n[stop]\nmax_experiments = 2\n");
  // The run's deadline is the budget plus the overhead, not the timeout.
  EXPECT_EQ(steps.calls.back().timeout_s, 15);
  steps.calls.clear();
  run_override = [](const RunSpec&) {
    RunResult r;
    r.end = RunResult::End::kTimedOut;
    r.wall_s = 15;
    return r;
  };
  Propose(4);
  RunLoop("overhead = \"5s\"\n[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(3), Status::kTimeout);
  EXPECT_EQ(Exp(3).reason, "ran past its budget: killed at 15s (budget 10s + overhead 5s)");
}

TEST_F(EngineTest, ProposerOutcomes) {
  edits.push_back([](FileMap*) { return std::string("nothing"); });  // edits nothing
  proposer.edit = [this, inner = proposer.edit](const ProposalRequest& r) {
    if (proposer.calls == 2) {
      Proposal p;
      p.outcome = Proposal::Outcome::kFailed;
      p.reason = "script exited 3";
      p.warnings = {"the agent printed no usage report"};
      return p;
    }
    return inner(r);
  };
  RunLoop("[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(2), Status::kNoChange);
  EXPECT_EQ(StatusOf(3), Status::kProposeFailed);
  EXPECT_EQ(Exp(3).reason, "script exited 3");
  EXPECT_EQ(Exp(3).warnings.back(), "the agent printed no usage report");
}

TEST_F(EngineTest, BuildAndGates) {
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
  run_override = [this](const RunSpec& spec) {
    double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    RunResult r = Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) +
                                "\nmem_mb: 12\n");
    r.peak_rss_mb = x * 1000;  // measured: 6000
    return r;
  };
  Propose(6);  // better score, measured 6000 MB > 5000; it printed 12
  RunLoop("[stop]\nmax_experiments = 2\n", [](LoopConfig* c) {
    Constraint constraint;
    std::string err;
    ASSERT_TRUE(ParseConstraint("run.peak_mem_mb <= 5000", &constraint, &err));
    c->constraints.push_back(constraint);
  });
  EXPECT_EQ(StatusOf(2), Status::kDiscard);
  EXPECT_EQ(Exp(2).reason, "violates constraint run.peak_mem_mb <= 5000 (6000)");
}

TEST_F(EngineTest, MinDeltaAndNoiseWithoutTheWinnersCurse) {
  // Baseline repeats measure the noise; a candidate must beat it on its
  // confirmation runs alone (the lucky run that selected it is not counted).
  std::deque<double> scores = {10.0, 10.2, 9.8,  // baseline x3: mean 10, sd 0.2
                               8.0, 9.9, 10.1,   // lucky selection run, then two ordinary ones
                               9.0, 8.8, 8.6};   // clearly better
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
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
  EXPECT_NEAR(*Exp(2).metric, 10.0, 1e-9) << "the confirm runs' mean, not 9.33";
  EXPECT_EQ(Exp(2).metric_n, 2);
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_NEAR(*Exp(3).metric, 8.7, 1e-9);
  EXPECT_EQ(ledger.runs.size(), 9u);
  EXPECT_EQ(ledger.runs[1].purpose, "baseline_repeat");
  EXPECT_EQ(ledger.runs[4].purpose, "confirm");
  // Noise pooled over the baseline (2 dof) and both confirmations (1 each).
  EXPECT_NE(Exp(3).reason.find("4 dof"), std::string::npos) << Exp(3).reason;
}

TEST_F(EngineTest, IdenticalRunsAreNoEvidence) {
  // Three identical baseline runs give a noise of zero; a no-op candidate
  // equal up to rounding is not "beyond noise".
  int n = 0;
  run_override = [&](const RunSpec&) {
    return Exited(0, n++ == 3 ? "---\nscore: 0.99999999999999\n" : "---\nscore: 1\n");
  };
  ProposeEdit([](FileMap* c) {
    (*c)["src/a.c"] = "// a comment";
    return "no-op";
  });
  RunLoop("[accept]\nbaseline_repeats = 3\nconfirm = 2\n[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
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
  EXPECT_EQ(summary.kind, StopKind::kInterrupted);
}

TEST_F(EngineTest, SecondCtrlCCancelsTheRun) {
  Propose(5);
  int n = 0;
  run_override = [&](const RunSpec&) {
    if (n++ == 0) return Exited(0, "---\nscore: 36\n");
    interrupts = 2;
    cancel = true;
    return Exited(0, "---\nscore: 1\n", 100);  // still running when cancelled
  };
  StopSummary summary = RunLoop("");
  EXPECT_EQ(steps.cancels, 1);
  EXPECT_EQ(StatusOf(2), Status::kInterrupted);
  EXPECT_EQ(Exp(2).reason, "stopped by the user during the run");
  EXPECT_EQ(repo.worktree.at("x.txt"), "1");
  EXPECT_NE(summary.reason.find("Ctrl-C"), std::string::npos);
}

TEST_F(EngineTest, BaselineFailureStops) {
  run_override = [](const RunSpec&) { return Exited(0, "no metric\n"); };
  StopSummary summary = RunLoop("");
  EXPECT_EQ(ledger.experiments.size(), 1u);
  EXPECT_EQ(summary.kind, StopKind::kBaselineFailed);
  EXPECT_NE(summary.reason.find("the baseline failed (crash"), std::string::npos);
  EXPECT_EQ(proposer.calls, 0);
}

TEST_F(EngineTest, Patience) {
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
  EXPECT_EQ(summary.kind, StopKind::kCircuitBreaker);
  EXPECT_NE(summary.reason.find("circuit breaker: 2 failed experiments in a row"),
            std::string::npos);
}

// The trusted judge: [verify] gives the metric; the run's words are claims.
TEST_F(EngineTest, VerifierScoresAndClaimsAreChecked) {
  // The run prints its own summary; the verifier (run in the loop directory,
  // talking to the candidate's server) prints the real one.
  run_override = [this](const RunSpec& spec) {
    const bool baseline = repo.copies.at(spec.cwd).at("x.txt") == "1";
    return Exited(0, baseline ? "---\nsteps: 7\n" : "---\nscore: 0.001\nsteps: 7\n", 10);
  };
  steps.connected = [this](const RunSpec& verifier, const RunSpec& server) {
    EXPECT_EQ(verifier.cwd, "/loop");
    EXPECT_EQ(server.cwd.rfind("/loop/.ratchet/work/", 0), 0u);
    double x = std::stod(repo.copies.at(server.cwd).at("x.txt"));
    return std::make_pair(Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", 2),
                          Exited(0, "", 2));
  };
  Propose(5);
  StopSummary summary =
      RunLoop("[verify]\ncommand = \"eval\"\nserve = \"serve\"\n[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(StatusOf(1), Status::kKeep) << Exp(1).reason;
  EXPECT_EQ(*Exp(1).metric, 36);
  EXPECT_EQ(Exp(1).claims.at("steps"), 7) << "what the run printed is kept as a claim";
  // The run claimed 0.001; the judge measured 4.
  EXPECT_EQ(StatusOf(2), Status::kRejected);
  EXPECT_EQ(Exp(2).reason, "claimed score 0.001, verified 4");
  EXPECT_EQ(Tip(), "c0");
}

TEST_F(EngineTest, VerifierFailureIsACrashNamingTheServer) {
  steps.connected = [](const RunSpec&, const RunSpec&) {
    return std::make_pair(Exited(1, "FAIL: the model server closed the pipe\n"),
                          Exited(3, "opened /loop/data/val.bin: permission denied"));
  };
  StopSummary summary = RunLoop("[verify]\ncommand = \"eval\"\nserve = \"serve\"\n");
  EXPECT_EQ(StatusOf(1), Status::kCrash);
  EXPECT_NE(Exp(1).reason.find("verification exit 1: the model server closed the pipe"),
            std::string::npos)
      << Exp(1).reason;
  EXPECT_NE(Exp(1).reason.find("the model server exit 3"), std::string::npos) << Exp(1).reason;
  EXPECT_EQ(summary.kind, StopKind::kBaselineFailed);
}

TEST_F(EngineTest, EachStepSeesOnlyItsView) {
  sandbox_available = true;
  steps.connected = [](const RunSpec&, const RunSpec&) {
    return std::make_pair(Exited(0, "---\nscore: 3\n"), Exited(0, ""));
  };
  RunLoop("sees = [\"data/train.bin\"]\nbuild = \"make\"\n[verify]\ncommand = \"eval\"\n"
          "serve = \"serve\"\n");
  std::map<std::string, RunSpec> by_command;
  for (const RunSpec& s : steps.calls) by_command[FakeRunner::CommandOf(s)] = s;
  auto has = [](const RunSpec& spec, const std::string& source, const std::string& target,
                Mount::Kind kind) {
    for (const Mount& m : spec.sandbox.mounts)
      if (m.source == source && m.target == target && m.kind == kind) return true;
    return false;
  };
  const std::string copy = "/loop/.ratchet/work/1";
  const RunSpec& run = by_command.at("sh run.sh");
  EXPECT_TRUE(run.sandbox.enabled);
  EXPECT_FALSE(run.sandbox.network);
  EXPECT_TRUE(has(run, copy, "", Mount::Kind::kWritable));
  EXPECT_TRUE(has(run, copy + "/run.sh", "", Mount::Kind::kReadOnly)) << "protected: read-only";
  EXPECT_TRUE(has(run, "/loop/data/train.bin", copy + "/data/train.bin", Mount::Kind::kReadOnly));
  EXPECT_TRUE(has(run, "/loop/.ratchet/runs/1/out", "", Mount::Kind::kWritable));
  EXPECT_EQ(run.sandbox.home, "/loop/.ratchet/runs/1/home/run");
  EXPECT_FALSE(has(by_command.at("make"), "/loop/.ratchet/runs/1/out", "", Mount::Kind::kWritable));
  const RunSpec& serve = by_command.at("serve");
  EXPECT_TRUE(has(serve, copy, "", Mount::Kind::kReadOnly));
  EXPECT_FALSE(has(serve, "/loop/data/train.bin", copy + "/data/train.bin", Mount::Kind::kReadOnly));
  const RunSpec& verify = by_command.at("eval");
  EXPECT_TRUE(has(verify, "/loop", "", Mount::Kind::kReadOnly));
  EXPECT_TRUE(has(verify, "", "/loop/.git", Mount::Kind::kHidden));
  EXPECT_TRUE(has(verify, "", "/loop/.ratchet", Mount::Kind::kHidden));
  auto env = std::map<std::string, std::string>(verify.env.begin(), verify.env.end());
  EXPECT_EQ(env["RATCHET_VERIFY_SPLIT"], "val");
  EXPECT_EQ(env["RATCHET_SERVE_WRITE_FD"], "3");
}

TEST_F(EngineTest, RequiredSandboxThatDoesNotWorkIsRefused) {
  LoopConfig config = Config();
  config.sandbox.required = true;
  Engine engine(config, Deps());
  std::string err;
  EXPECT_FALSE(engine.Preflight(&err));
  EXPECT_NE(err.find("the sandbox for untrusted steps does not work here (no bwrap in the fakes)"),
            std::string::npos)
      << err;
}

// Many experiments in flight.
// A run that reached .git (no sandbox) and deleted its tried ref, moved the
// branch and planted a hook: all put back before its result counts, and its
// experiment is out of scope, not kept; the loop goes on.
TEST_F(EngineTest, ARunThatChangesRatchetsGitStateIsPutBackAndOutOfScope) {
  Propose(6);  // 1: would be kept
  Propose(5);  // 4: the next one, honest
  run_override = [this](const RunSpec& spec) {
    double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    if (x == 6) {
      repo.refs.erase("refs/ratchet/tried/2");
      repo.refs["refs/heads/ratchet/main"] = "forged";
      repo.planted = {".git/hooks/post-checkout added (removed)"};
    }
    return Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", 10);
  };
  RunLoop("[stop]\nmax_experiments = 3\n");
  ASSERT_EQ(ledger.experiments.size(), 3u);
  EXPECT_EQ(StatusOf(2), Status::kOutOfScope) << Exp(2).reason;
  for (const char* part : {"refs/ratchet/tried/2 deleted (put back)",
                           "refs/heads/ratchet/main moved to forged (put back)",
                           ".git/hooks/post-checkout added (removed)"})
    EXPECT_NE(Exp(2).reason.find(part), std::string::npos) << Exp(2).reason;
  EXPECT_EQ(repo.refs["refs/ratchet/tried/2"], Exp(2).candidate_commit) << "nothing tried is lost";
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_EQ(Tip(), Exp(3).candidate_commit);
  EXPECT_EQ(repo.Log("refs/heads/ratchet/main"),
            (std::vector<std::string>{Exp(3).candidate_commit, "c0"}));
  int restored = 0;
  for (const LedgerEvent& e : ledger.events)
    restored += e.kind == "state_restored" && e.experiment_id == 2;
  EXPECT_EQ(restored, 1);
  EXPECT_EQ(repo.owned_checks, static_cast<int>(steps.calls.size())) << "checked after every step";
}

// With two experiments in flight, a change cannot be pinned on one: both
// rows say so, neither is failed for it, and the change is still put back.
TEST_F(EngineTest, AChangeWhileSeveralRanIsPutBackAndNamedInEachRow) {
  Propose(6);
  Propose(5);
  run_override = [this](const RunSpec& spec) {
    double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    if (x == 5) repo.planted = {".git/config changed (put back)"};
    // #2 ends last, so #3's step ends while #2's still runs.
    const double wall = x == 6 ? 30 : 10;
    return Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", wall);
  };
  RunLoop("workers = 2\n[stop]\nmax_experiments = 3\n");
  ASSERT_EQ(ledger.experiments.size(), 3u);
  for (int id : {2, 3}) {
    EXPECT_NE(StatusOf(id), Status::kOutOfScope) << id;
    bool named = false;
    for (const std::string& w : Exp(id).warnings)
      named = named || (w.find("experiment #2, #3 changed ratchet's git state: .git/config") !=
                        std::string::npos);
    EXPECT_TRUE(named) << id;
  }
}

TEST_F(EngineTest, WorkersRunExperimentsAtOnceAndRebaseWinners) {
  // Three workers propose from the baseline at once: two winners that touch
  // different files (the second is rebased onto the first), and one that
  // conflicts with the first winner's file.
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "6";  // 1: the best
    return "x=6";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["src/a.c"] = "int a = 2;";  // same score as the baseline: discard
    return "a";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "5";  // 4: better than the baseline, but conflicts with x=6
    return "x=5";
  });
  run_override = [this](const RunSpec& spec) {
    double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    // Later experiments finish sooner: decisions come in a different order.
    const int id = std::stoi(spec.cwd.substr(spec.cwd.rfind('/') + 1));
    return Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", 50.0 - 10 * id);
  };
  RunLoop("workers = 3\nslots = [\"gpu0\", \"gpu1\", \"gpu2\"]\nslot_env = \"CUDA_VISIBLE_DEVICES\"\n"
          "[stop]\nmax_experiments = 4\n");
  ASSERT_EQ(ledger.experiments.size(), 4u);
  // #4 (x=5) finishes first and is kept; #3 is no better; #2 (x=6) beats #4
  // but changed x.txt too, so it does not apply to the new incumbent.
  EXPECT_EQ(StatusOf(4), Status::kKeep) << Exp(4).reason;
  EXPECT_EQ(StatusOf(3), Status::kDiscard) << Exp(3).reason;
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
  EXPECT_NE(Exp(2).reason.find("changed x.txt too (conflict)"), std::string::npos) << Exp(2).reason;
  std::set<int> workers;
  for (int id = 2; id <= 4; ++id) workers.insert(Exp(id).worker);
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2})) << "each in its own slot";
  std::set<std::string> devices;
  for (const RunSpec& s : steps.calls) {
    auto env = std::map<std::string, std::string>(s.env.begin(), s.env.end());
    if (FakeRunner::CommandOf(s) == "sh run.sh") devices.insert(env["CUDA_VISIBLE_DEVICES"]);
  }
  EXPECT_EQ(devices, (std::set<std::string>{"gpu0", "gpu1", "gpu2"}));
  EXPECT_EQ(repo.Log("refs/heads/ratchet/main"),
            (std::vector<std::string>{Exp(4).candidate_commit, "c0"}));
}

TEST_F(EngineTest, AWinnerIsRebasedOntoAMovedIncumbent) {
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "6";
    return "x=6";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["src/a.c"] = "int a = 3;";
    return "a=3";
  });
  // The a.c change divides the score by 100 (0.36 from the baseline, better
  // than #2's 1) and finishes last, after #2 moved the incumbent.
  run_override = [this](const RunSpec& spec) {
    const FileMap& copy = repo.copies.at(spec.cwd);
    double x = std::stod(copy.at("x.txt"));
    double score = (x - 7) * (x - 7) * (copy.at("src/a.c") == "int a = 3;" ? 0.01 : 1);
    const int id = std::stoi(spec.cwd.substr(spec.cwd.rfind('/') + 1));
    return Exited(0, "---\nscore: " + std::to_string(score) + "\n", id == 3 ? 30 : 10);
  };
  RunLoop("workers = 2\n[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(2), Status::kKeep) << Exp(2).reason;
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_NE(Exp(3).reason.find("applied to the current best #2"), std::string::npos)
      << Exp(3).reason;
  EXPECT_NE(Exp(3).tried_commit, "");
  EXPECT_EQ(repo.parents[Exp(3).candidate_commit], Exp(2).candidate_commit);
  EXPECT_EQ(repo.worktree.at("x.txt"), "6");
  EXPECT_EQ(repo.worktree.at("src/a.c"), "int a = 3;");
}

TEST_F(EngineTest, MovedWinnersCanBeRunAgain) {
  ProposeEdit([](FileMap* c) {
    (*c)["x.txt"] = "6";
    return "x=6";
  });
  ProposeEdit([](FileMap* c) {
    (*c)["src/a.c"] = "int a = 3;";
    return "a=3";
  });
  run_override = [this](const RunSpec& spec) {
    const FileMap& copy = repo.copies.at(spec.cwd);
    double x = std::stod(copy.at("x.txt"));
    double score = (x - 7) * (x - 7) * (copy.at("src/a.c") == "int a = 3;" ? 0.01 : 1);
    const int id = std::stoi(spec.cwd.substr(spec.cwd.rfind('/') + 1));
    return Exited(0, "---\nscore: " + std::to_string(score) + "\n", id == 3 ? 30 : 10);
  };
  RunLoop("workers = 2\nmoved = \"rerun\"\n[stop]\nmax_experiments = 3\n");
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  // The rebased commit ran again on the new incumbent (x=6 and a.c: 0.01).
  EXPECT_NEAR(*Exp(3).metric, 0.01, 1e-9);
  int reruns = 0;
  for (const RunRecord& r : ledger.runs) reruns += r.purpose == "rerun";
  EXPECT_EQ(reruns, 1);
}

// Recovery: a ledger left by a ratchet killed mid-experiment.
TEST_F(EngineTest, ResumeMarksAnUnfinishedExperimentInterruptedAndKeepsItsEdit) {
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 1\n");
  // Simulate a kill while #2 was being proposed: its copy holds an edit.
  std::string err;
  Experiment e;
  e.phase = Phase::kProposing;
  e.parent_commit = "c0";
  ledger.InsertExperiment(&e, &err);
  repo.copies["/loop/.ratchet/work/2"] = repo.commits["c0"];
  repo.copies["/loop/.ratchet/work/2"]["x.txt"] = "4";
  edits.clear();
  Propose(6);
  Engine engine(Config("[stop]\nmax_experiments = 3\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(StatusOf(2), Status::kInterrupted);
  EXPECT_EQ(Exp(2).reason, "ratchet stopped while the experiment was proposing");
  EXPECT_EQ(repo.commits[repo.refs["refs/ratchet/tried/2"]].at("x.txt"), "4") << "nothing lost";
  EXPECT_EQ(StatusOf(3), Status::kKeep);
  EXPECT_EQ(Exp(3).parent_commit, "c0");
  EXPECT_EQ(ledger.sessions.size(), 2u);
}

// A run that outlived ratchet on a cluster: the experiment takes it up
// again, and is decided on it, instead of being interrupted.
TEST_F(EngineTest, ResumeReattachesARunStillOnTheExecutor) {
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 1\n");
  CopyScan scan;
  scan.base = "c0";
  scan.changes = {{FileChange::Kind::kModified, "x.txt"}};
  scan.contents["x.txt"] = {"6", false};
  std::string sha, err;
  repo.CommitScan(scan, "candidate", &sha, &err);
  Experiment e;  // killed while its run was on the cluster
  e.phase = Phase::kRunning;
  e.parent_commit = "c0";
  e.candidate_commit = sha;
  e.proposer = "script";
  e.description = "x=6";
  ledger.InsertExperiment(&e, &err);
  RunRecord preflight;  // its preflight had passed: attempt 0, not a run that measured
  preflight.experiment_id = 2;
  preflight.attempt = 0;
  preflight.purpose = "preflight";
  ledger.AddRun(preflight, &err);
  repo.copies["/loop/.ratchet/work/2"] = repo.commits[sha];
  Experiment building = e;  // and one whose build is not on the executor any more
  building.phase = Phase::kBuilding;
  ledger.InsertExperiment(&building, &err);
  repo.copies["/loop/.ratchet/work/3"] = repo.commits[sha];
  steps.reattachable = {"/loop/.ratchet/runs/2/run.log", "/loop/.ratchet/runs/3/run.log"};
  steps.leftover_notes = {"cancelled slurm job 7, left running by an earlier session"};
  const size_t calls_before = steps.calls.size();
  const int ended_before = steps.leftovers_ended;
  Engine engine(Config("[stop]\nmax_experiments = 3\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(StatusOf(2), Status::kKeep) << Exp(2).reason;
  EXPECT_NEAR(*Exp(2).metric, 1, 1e-9);  // (6 - 7)^2, from the run taken up
  EXPECT_EQ(Tip(), sha);
  EXPECT_EQ(StatusOf(3), Status::kInterrupted);
  EXPECT_EQ(Exp(3).reason, "ratchet stopped while the experiment was building");
  // Experiment 2 started its run again (which the executor reattaches),
  // and nothing before it: no checkout, no build, no second run.
  std::vector<std::string> started;
  for (size_t i = calls_before; i < steps.calls.size(); ++i)
    if (steps.calls[i].log_path.rfind("/loop/.ratchet/runs/2/", 0) == 0)
      started.push_back(steps.calls[i].log_path);
  EXPECT_EQ(started, std::vector<std::string>{"/loop/.ratchet/runs/2/run.log"});
  EXPECT_EQ(steps.leftovers_ended, ended_before + 1) << "once per session";
  std::string reattached;
  for (const LedgerEvent& ev : ledger.events)
    if (ev.kind == "reattached" && ev.experiment_id == 2) reattached = ev.detail_json;
  EXPECT_EQ(reattached, R"({"step":"run"})");
}

// Builds, before gates and preflights are cluster jobs too: an experiment
// killed while one of them ran takes that step up again, and nothing before
// it runs a second time.
TEST_F(EngineTest, ResumeReattachesABuildAGateAndAPreflightStillOnTheExecutor) {
  for (const char* command : {"make", "./lint", "./grad"})
    special[command] = [](const RunSpec&) { return Exited(0, ""); };
  run_override = [&](const RunSpec& spec) {  // progress, so that a preflight passes
    const double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    return Exited(
        0, "progress: elapsed=1 loss=2\n---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n",
        2);
  };
  const std::string config =
      "build = \"make\"\n[[gate]]\nname = \"lint\"\ncommand = \"./lint\"\n"
      "[[gate]]\nname = \"grad\"\ncommand = \"./grad\"\n";
  auto preflight = [](LoopConfig* c) { c->preflight_s = 1; };
  RunLoop(config + "[stop]\nmax_experiments = 1\n", preflight);
  // Experiments 2, 3 and 4, killed in their build, their second gate and
  // their preflight: candidates worse than the baseline (x=1, score 36).
  KilledAt(Phase::kBuilding, 20, "build");
  KilledAt(Phase::kBuilding, 21, "gate-grad");
  KilledAt(Phase::kRunning, 22, "preflight");
  LoopConfig resumed = Config(config + "[stop]\nmax_experiments = 4\n");
  preflight(&resumed);
  std::map<int, std::vector<std::string>> started = Resume(resumed);
  using Names = std::vector<std::string>;
  EXPECT_EQ(started[2],
            (Names{"build.log", "gate-lint.log", "gate-grad.log", "preflight.log", "run.log"}));
  EXPECT_EQ(started[3], (Names{"gate-grad.log", "preflight.log", "run.log"})) << "lint had passed";
  EXPECT_EQ(started[4], (Names{"preflight.log", "run.log"}));
  for (int id : {2, 3, 4})
    EXPECT_EQ(StatusOf(id), Status::kDiscard) << "#" << id << ": " << Exp(id).reason;
  std::map<int, std::string> reattached;
  for (const LedgerEvent& ev : ledger.events)
    if (ev.kind == "reattached") reattached[ev.experiment_id] = ev.detail_json;
  EXPECT_EQ(reattached, (std::map<int, std::string>{{2, R"({"step":"build"})"},
                                                    {3, R"({"step":"gate-grad"})"},
                                                    {4, R"({"step":"preflight"})"}}));
}

// After the first runs: an after gate, or a confirm run of a would-be keep.
TEST_F(EngineTest, ResumeReattachesAnAfterGateAndAConfirmRunStillOnTheExecutor) {
  special["./after"] = [](const RunSpec&) { return Exited(0, ""); };
  const std::string config =
      "[[gate]]\nname = \"after\"\ncommand = \"./after\"\nwhen = \"after\"\n"
      "[accept]\nconfirm = 2\n";
  RunLoop(config + "[stop]\nmax_experiments = 1\n");
  // #2 (x=20, worse than the baseline's 36) was in its after gate; #3 (x=6)
  // had won its selection run and one of its two confirm runs.
  KilledAt(Phase::kRunning, 20, "gate-after", {"main"});
  const std::string winner =
      Exp(KilledAt(Phase::kRunning, 6, "run-3", {"main", "confirm"})).candidate_commit;
  std::map<int, std::vector<std::string>> started =
      Resume(Config(config + "[stop]\nmax_experiments = 3\n"));
  EXPECT_EQ(started[2], std::vector<std::string>{"gate-after.log"}) << "then judged: worse";
  EXPECT_EQ(started[3], std::vector<std::string>{"run-3.log"}) << "the last confirm run only";
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_EQ(Tip(), winner);
  EXPECT_EQ(Attempts()[3], (std::vector<std::string>{"1 main", "2 confirm", "3 confirm"}));
  EXPECT_EQ(Exp(3).metric_n, 2) << "decided on the two confirm runs";
}

// A winner run again on its moved incumbent ([run] moved = "rerun"): its
// rebased commit's build, or its run again, is taken up, and the decision
// is made on the runs again alone.
TEST_F(EngineTest, ResumeReattachesTheRunAgainOfAMovedWinner) {
  special["make"] = [](const RunSpec&) { return Exited(0, ""); };
  const std::string config = "build = \"make\"\nmoved = \"rerun\"\n";
  RunLoop(config + "[stop]\nmax_experiments = 1\n");
  // Each won its first run (0.5) on its old parent; the row holds the
  // commit rebased onto the baseline, and the one it had tried.
  auto moved = [](Experiment* e) { e->tried_commit = "c9"; };
  const std::string winner =
      Exp(KilledAt(Phase::kRunning, 6, "run-2", {"main"}, 0.5, moved)).candidate_commit;
  KilledAt(Phase::kBuilding, 20, "build", {"main"}, 0.5, moved);
  std::map<int, std::vector<std::string>> started =
      Resume(Config(config + "[stop]\nmax_experiments = 3\n"));
  EXPECT_EQ(started[2], std::vector<std::string>{"run-2.log"});
  EXPECT_EQ(started[3], (std::vector<std::string>{"build.log", "run-2.log"}));
  EXPECT_EQ(StatusOf(2), Status::kKeep) << Exp(2).reason;
  EXPECT_NEAR(*Exp(2).metric, 1, 1e-9) << "(6 - 7)^2 from the run again, not 0.5";
  EXPECT_EQ(Tip(), winner);
  EXPECT_EQ(StatusOf(3), Status::kDiscard) << Exp(3).reason;
  for (int id : {2, 3})
    EXPECT_EQ(Attempts()[id], (std::vector<std::string>{"1 main", "2 rerun"})) << "#" << id;
}

// A `ratchet rerun` is taken up like any candidate, and still run in full:
// its row says it is one, so no preflight comes in after its build.
TEST_F(EngineTest, ResumeReattachesARerunByHandAndStillRunsItInFull) {
  special["make"] = [](const RunSpec&) { return Exited(0, ""); };
  run_override = [&](const RunSpec& spec) {  // progress, so that a preflight would pass
    const double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    return Exited(
        0, "progress: elapsed=1 loss=2\n---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n",
        2);
  };
  const std::string config = "build = \"make\"\n";
  auto preflight = [](LoopConfig* c) { c->preflight_s = 1; };
  RunLoop(config + "[stop]\nmax_experiments = 1\n", preflight);
  auto by_hand = [](Experiment* e) { e->proposer = kRerunByHand; };
  KilledAt(Phase::kBuilding, 20, "build", {}, std::nullopt, by_hand);
  const std::string winner =
      Exp(KilledAt(Phase::kRunning, 6, "run", {}, std::nullopt, by_hand)).candidate_commit;
  LoopConfig resumed = Config(config + "[stop]\nmax_experiments = 3\n");
  preflight(&resumed);
  std::map<int, std::vector<std::string>> started = Resume(resumed);
  EXPECT_EQ(started[2], (std::vector<std::string>{"build.log", "run.log"})) << "no preflight";
  EXPECT_EQ(started[3], std::vector<std::string>{"run.log"});
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_EQ(Tip(), winner);
  for (int id : {2, 3}) EXPECT_EQ(Attempts()[id], std::vector<std::string>{"1 main"}) << "#" << id;
}

TEST_F(EngineTest, ABaselineRepeatIsReattachedAfterTheRunsItHadRecorded) {
  std::string err;
  Experiment e;  // the baseline, killed during its second of three runs
  e.phase = Phase::kRunning;
  e.baseline = true;
  e.parent_commit = "c0";
  e.candidate_commit = "c0";
  e.proposer = "baseline";
  ledger.InsertExperiment(&e, &err);
  RunRecord first;
  first.experiment_id = 1;
  first.attempt = 1;
  first.purpose = "main";
  first.metric = 36.5;
  first.metrics["score"] = 36.5;
  ledger.AddRun(first, &err);
  repo.copies["/loop/.ratchet/work/1"] = repo.commits["c0"];
  steps.reattachable = {"/loop/.ratchet/runs/1/run-2.log"};
  Engine engine(Config("[accept]\nbaseline_repeats = 3\n[stop]\nmax_experiments = 1\n"),
                Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(StatusOf(1), Status::kKeep) << Exp(1).reason;
  std::vector<std::string> attempts;
  for (const RunRecord& r : ledger.runs)
    if (r.experiment_id == 1) attempts.push_back(std::to_string(r.attempt) + " " + r.purpose);
  EXPECT_EQ(attempts, (std::vector<std::string>{"1 main", "2 baseline_repeat", "3 baseline_repeat"}));
  EXPECT_NEAR(*Exp(1).metric, (36.5 + 36 + 36) / 3, 1e-9) << "the recorded run counts";
}

TEST_F(EngineTest, ResumeFinishesADecidedKeep) {
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 1\n");
  CopyScan scan;
  scan.base = "c0";
  scan.changes = {{FileChange::Kind::kModified, "x.txt"}};
  scan.contents["x.txt"] = {"5", false};
  std::string sha, err;
  repo.CommitScan(scan, "candidate", &sha, &err);
  Experiment e;
  e.phase = Phase::kDecided;
  e.status = Status::kKeep;
  e.metric = 4;
  e.parent_commit = "c0";
  e.candidate_commit = sha;
  ledger.InsertExperiment(&e, &err);  // killed before the branch moved
  Engine engine(Config("[stop]\nmax_experiments = 2\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(Tip(), sha);
  EXPECT_EQ(Exp(2).phase, Phase::kDone);
}

TEST_F(EngineTest, ALedgerChangedOutsideRatchetIsPutBackOrRefused) {
  RunLoop("[stop]\nmax_experiments = 1\n");
  // A run rewrote a row: the journal still holds what ratchet wrote.
  Experiment forged = Exp(1);
  Experiment written = Exp(1);
  forged.metric = 0.001;
  ledger.experiments[0] = forged;
  ledger.check.row_problems = {"experiment 1 was changed outside ratchet: metric 0.001 (...)"};
  ledger.written = {written};
  std::string err;
  Engine engine(Config("[stop]\nmax_experiments = 1\n"), Deps());
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  EXPECT_EQ(*Exp(1).metric, 36) << "put back from the journal";
  EXPECT_EQ(ledger.events.back().kind, "ledger_repaired");
  // A journal that does not hold stops everything.
  ledger.check.journal_problems = {"journal entry 3 (experiment 1) was rewritten"};
  Engine refused(Config(), Deps());
  EXPECT_FALSE(refused.Preflight(&err));
  EXPECT_NE(err.find("the ledger's journal was changed outside ratchet"), std::string::npos) << err;
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

TEST_F(EngineTest, PrepareMakesTheTrustedOutputsOnceAndChecksThem) {
  int prepares = 0;
  special["make trusted"] = [&](const RunSpec& spec) {
    EXPECT_EQ(spec.cwd, "/loop");
    EXPECT_FALSE(spec.sandbox.enabled) << "trusted, and may need the network";
    ++prepares;
    workspace.ignored["trusted/evaluate"] = "evaluator";
    return Exited(0, "");
  };
  const std::string prepare = "[prepare]\ncommand = \"make trusted\"\noutputs = [\"trusted/**\"]\n";
  RunLoop(prepare + "[stop]\nmax_experiments = 1\n");
  RunLoop(prepare + "[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(prepares, 1) << "outputs present and unchanged: not made again";
  // A doctored evaluator is found before the next run, and stops the loop.
  workspace.ignored["trusted/evaluate"] = "doctored";
  LoopConfig config = Config(prepare + "[stop]\nmax_experiments = 3\n");
  Engine engine(config, Deps());
  std::string err;
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  EXPECT_FALSE(engine.Run(&summary, &err));
  EXPECT_NE(err.find("prepared output: protected file trusted/evaluate changed"), std::string::npos)
      << err;
}

class CountingMechanism : public Mechanism {
 public:
  std::string name() const override { return "veto-odd"; }
  std::vector<Hook> hooks() const override {
    return {Hook::kBeforePropose, Hook::kOnCandidate, Hook::kOnResult};
  }
  void BeforePropose(const LoopView&, Guidance*) override {}
  CandidateVerdict OnCandidate(const LoopView&, const CandidateView& c) override {
    CandidateVerdict v;
    v.veto = c.experiment_id % 2 == 1;
    v.reason = "odd experiments are tabu";
    return v;
  }
  void OnResult(const LoopView&, const Experiment&) override { ++results; }
  int results = 0;
};

TEST_F(EngineTest, AClearlyWorseRunIsPrunedAndASlightlyBetterOneIsNot) {
  // Loss falls towards the run's final score; each run jitters a little, so
  // the baseline's two runs measure the curve's noise.
  int run_count = 0;
  run_override = [&](const RunSpec& spec) {
    const double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    const double score = (x - 7) * (x - 7);
    const double jitter = (++run_count % 2 ? 0.1 : -0.1);
    std::string out;
    for (int t = 1; t < 10; ++t)
      out += "progress: elapsed=" + std::to_string(t) +
             " loss=" + std::to_string(score + 20.0 / t + jitter) + "\n";
    return Exited(0, out + "---\nscore: " + std::to_string(score) + "\n", 10);
  };
  Propose(30);   // (30-7)^2 = 529 against the baseline's 36: clearly worse
  Propose(1.5);  // 30.25: slightly better, by far less than the first is worse
  RunLoop(R"(
[stop]
max_experiments = 3
[accept]
baseline_repeats = 2
[prune]
rule = "median"
value = "loss"
min_runs = 1
)");
  ASSERT_GE(ledger.experiments.size(), 3u);
  EXPECT_EQ(StatusOf(2), Status::kPruned) << Exp(2).reason;
  EXPECT_NE(Exp(2).reason.find("pruned: loss"), std::string::npos) << Exp(2).reason;
  EXPECT_NE(Exp(2).reason.find("at 50% of the budget"), std::string::npos) << Exp(2).reason;
  EXPECT_LT(Exp(2).run_s, 6) << "stopped at the 50% checkpoint, not after the whole 10 s";
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  // The curves are in the ledger, stamped with ratchet's clock.
  int with_curves = 0;
  for (const RunRecord& r : ledger.runs) {
    if (r.curve.empty()) continue;
    ++with_curves;
    EXPECT_GE(r.curve.front().t, 1);
    EXPECT_TRUE(r.curve.front().values.count("loss"));
  }
  EXPECT_EQ(with_curves, 4) << "the baseline's two runs, the pruned one, the kept one";
  const RunRecord* pruned = nullptr;
  for (const RunRecord& r : ledger.runs)
    if (r.experiment_id == 2) pruned = &r;
  ASSERT_NE(pruned, nullptr);
  EXPECT_LE(pruned->curve.back().t, 5.0) << "nothing after the run was cut";
}

TEST_F(EngineTest, ARerunByHandRunsAPrunedChangeInFullOnTheCurrentIncumbent) {
  // The score is (x - 7)^2, less 5 when src/a.c was changed.
  int run_count = 0;
  run_override = [&](const RunSpec& spec) {
    const FileMap& copy = repo.copies.at(spec.cwd);
    const double x = std::stod(copy.at("x.txt"));
    const double score = (x - 7) * (x - 7) - (copy.at("src/a.c") == "int a;" ? 0 : 5);
    const double jitter = (++run_count % 2 ? 0.1 : -0.1);
    std::string out;
    for (int t = 1; t < 10; ++t)
      out += "progress: elapsed=" + std::to_string(t) +
             " loss=" + std::to_string(score + 20.0 / t + jitter) + "\n";
    return Exited(0, out + "---\nscore: " + std::to_string(score) + "\n", 10);
  };
  Propose(30);  // pruned
  ProposeEdit([](FileMap* copy) {
    (*copy)["src/a.c"] = "int a = 1;";
    return "touch a.c";
  });           // kept: the incumbent moves
  Propose(5);   // after the rerun: the proposer again
  // #4 runs #2's change again, merged onto the incumbent #3 made.
  steering.reruns.push_back(RerunRequest{1, 2});
  steering.ready = [&] { return ledger.experiments.size() >= 3 && StatusOf(3) == Status::kKeep; };
  RunLoop(R"(
[stop]
max_experiments = 5
[accept]
baseline_repeats = 2
[prune]
rule = "median"
value = "loss"
min_runs = 1
)");
  ASSERT_EQ(ledger.experiments.size(), 5u);
  EXPECT_EQ(StatusOf(2), Status::kPruned) << Exp(2).reason;
  EXPECT_EQ(StatusOf(3), Status::kKeep) << Exp(3).reason;
  EXPECT_EQ(steering.taken, 1);
  const Experiment& rerun = Exp(4);
  EXPECT_EQ(rerun.proposer, "rerun");
  EXPECT_EQ(rerun.description.rfind("rerun of #2: x=30", 0), 0u) << rerun.description;
  EXPECT_NE(rerun.hypothesis.find("it was pruned: pruned: loss"), std::string::npos)
      << rerun.hypothesis;
  EXPECT_EQ(rerun.parent_commit, Exp(3).candidate_commit) << "on the current incumbent";
  const FileMap& ran = repo.commits.at(rerun.candidate_commit);
  EXPECT_EQ(ran.at("x.txt"), std::to_string(30.0)) << "the earlier change";
  EXPECT_EQ(ran.at("src/a.c"), "int a = 1;") << "on top of the incumbent's";
  EXPECT_EQ(rerun.status, Status::kDiscard) << rerun.reason << ": run in full, not pruned";
  EXPECT_GE(rerun.run_s, 10) << "its whole budget";
  EXPECT_EQ(Exp(5).description, "x=" + std::to_string(5.0)) << "then the proposer again";
}

TEST_F(EngineTest, ARerunThatCannotApplyOrHasNoChangeIsAProposeFailure) {
  Propose(3);  // kept
  Propose(6);  // kept: x.txt moved on from what #2 changed
  steering.reruns = {RerunRequest{1, 2}, RerunRequest{2, 1}, RerunRequest{3, 99}};
  steering.ready = [&] { return ledger.experiments.size() >= 3; };
  RunLoop("[stop]\nmax_experiments = 6\n");
  ASSERT_GE(ledger.experiments.size(), 6u);
  EXPECT_EQ(StatusOf(2), Status::kKeep);
  EXPECT_EQ(StatusOf(3), Status::kKeep);
  EXPECT_EQ(StatusOf(4), Status::kProposeFailed);
  EXPECT_NE(Exp(4).reason.find("rerun of #2: it has no change to run again (keep)"),
            std::string::npos) << Exp(4).reason;
  EXPECT_EQ(StatusOf(5), Status::kProposeFailed);
  EXPECT_NE(Exp(5).reason.find("(keep)"), std::string::npos) << "the baseline: " << Exp(5).reason;
  EXPECT_EQ(StatusOf(6), Status::kProposeFailed);
  EXPECT_NE(Exp(6).reason.find("no such experiment"), std::string::npos) << Exp(6).reason;
}

TEST_F(EngineTest, ARerunWhoseChangeConflictsWithTheIncumbentIsRefused) {
  Propose(30);  // discarded
  Propose(6);   // kept: changes x.txt differently
  steering.reruns.push_back(RerunRequest{1, 2});
  steering.ready = [&] { return ledger.experiments.size() >= 3; };
  RunLoop("[stop]\nmax_experiments = 4\n");
  ASSERT_EQ(ledger.experiments.size(), 4u);
  EXPECT_EQ(StatusOf(2), Status::kDiscard);
  EXPECT_EQ(StatusOf(3), Status::kKeep);
  EXPECT_EQ(StatusOf(4), Status::kProposeFailed);
  EXPECT_NE(Exp(4).reason.find("rerun of #2: its change does not apply to the incumbent "
                               "(conflict in x.txt)"),
            std::string::npos)
      << Exp(4).reason;
}

TEST_F(EngineTest, PruningWithoutMeasuredNoiseWarnsAndPrunesNothing) {
  run_override = [&](const RunSpec& spec) {
    const double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    const double score = (x - 7) * (x - 7);
    std::string out;
    for (int t = 1; t < 10; ++t)
      out += "progress: elapsed=" + std::to_string(t) + " loss=" + std::to_string(score) + "\n";
    return Exited(0, out + "---\nscore: " + std::to_string(score) + "\n", 10);
  };
  Propose(30);
  RunLoop(R"(
[stop]
max_experiments = 2
[prune]
value = "loss"
min_runs = 1
)");
  ASSERT_GE(ledger.experiments.size(), 2u);
  EXPECT_EQ(StatusOf(2), Status::kDiscard) << Exp(2).reason;
  ASSERT_FALSE(Exp(2).warnings.empty());
  EXPECT_NE(Exp(2).warnings.back().find("no run-to-run noise"), std::string::npos)
      << Exp(2).warnings.back();
}

TEST_F(EngineTest, APreflightCatchesLateCrashesAndNanInSecondsAndLetsHealthyRunsThrough) {
  // The run trains for RATCHET_BUDGET_SECONDS, printing progress each
  // second, then evaluates: x=30 crashes at the end (saving), x=20 goes NaN
  // at once, others print their score.
  run_override = [&](const RunSpec& spec) {
    const double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
    const int budget = std::stoi(EnvValue(spec, "RATCHET_BUDGET_SECONDS"));
    std::string out;
    for (int t = 1; t < budget; ++t)
      out += "progress: elapsed=" + std::to_string(t) + " loss=" + (x == 20 ? "nan" : "2.5") + "\n";
    if (x == 30) return Exited(1, out + "cannot save the model\n", budget);
    return Exited(0, out + "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", budget);
  };
  Propose(30);
  Propose(20);
  Propose(5);
  RunLoop("[stop]\nmax_experiments = 4\n", [](LoopConfig* c) { c->preflight_s = 2; });
  ASSERT_EQ(ledger.experiments.size(), 4u);
  EXPECT_EQ(StatusOf(1), Status::kKeep);
  EXPECT_EQ(StatusOf(2), Status::kCrash);
  EXPECT_EQ(Exp(2).reason.rfind("preflight: exit 1", 0), 0u) << Exp(2).reason;
  EXPECT_NE(Exp(2).reason.find("preflight.log"), std::string::npos) << Exp(2).reason;
  EXPECT_EQ(StatusOf(3), Status::kCrash);
  EXPECT_NE(Exp(3).reason.find("preflight: progress shows loss=nan at 1s"), std::string::npos)
      << Exp(3).reason;
  EXPECT_EQ(StatusOf(4), Status::kKeep) << Exp(4).reason;
  EXPECT_EQ(Exp(4).metric, 4.0) << "scored by its full run, not the preflight";

  // Every candidate had a preflight at 2 s (attempt 0); only the healthy one
  // went on to a full run at 10 s; the baseline had none.
  std::map<int, std::vector<std::string>> budgets;
  for (const RunSpec& spec : steps.calls) {
    if (FakeRunner::CommandOf(spec) != "sh run.sh") continue;
    const int id = std::stoi(EnvValue(spec, "RATCHET_EXPERIMENT"));
    budgets[id].push_back(EnvValue(spec, "RATCHET_BUDGET_SECONDS") + "@" +
                          EnvValue(spec, "RATCHET_ATTEMPT"));
    if (EnvValue(spec, "RATCHET_ATTEMPT") == "0") {
      EXPECT_NE(EnvValue(spec, "RATCHET_RUN_DIR").find("/preflight"), std::string::npos);
      EXPECT_LE(spec.timeout_s, 2 + 20 + 1e-9) << "the preflight's budget and the run's slack";
    }
  }
  EXPECT_EQ(budgets[1], (std::vector<std::string>{"10@1"}));
  EXPECT_EQ(budgets[2], (std::vector<std::string>{"2@0"}));
  EXPECT_EQ(budgets[3], (std::vector<std::string>{"2@0"}));
  EXPECT_EQ(budgets[4], (std::vector<std::string>{"2@0", "10@1"}));
  EXPECT_LT(Exp(3).run_s + Exp(2).run_s, 1e-9) << "no full run was spent on them";
  int preflights = 0;
  for (const RunRecord& r : ledger.runs) {
    if (r.attempt != 0) continue;
    ++preflights;
    EXPECT_EQ(r.purpose, "preflight");
    EXPECT_EQ(r.log_path, ".ratchet/runs/" + std::to_string(r.experiment_id) + "/preflight.log");
  }
  EXPECT_EQ(preflights, 3);
}

TEST_F(EngineTest, APreflightThatPrintsNoProgressFails) {
  Propose(5);  // the default run prints its score but no progress line
  RunLoop("[stop]\nmax_experiments = 2\n", [](LoopConfig* c) { c->preflight_s = 2; });
  ASSERT_EQ(ledger.experiments.size(), 2u);
  EXPECT_EQ(StatusOf(2), Status::kCrash);
  EXPECT_NE(Exp(2).reason.find("preflight: printed no progress line"), std::string::npos)
      << Exp(2).reason;
}

TEST_F(EngineTest, WorkersStartingAtOnceSeeEachOthersProposalsInFlight) {
  // Each proposal names its experiment in params; each request records the
  // params it was told are in flight.
  std::map<int, std::set<std::string>> seen;
  proposer.edit = [&](const ProposalRequest& request) {
    for (const Experiment& e : *request.in_flight) seen[request.experiment_id].insert(e.params_json);
    Proposal p;
    p.outcome = Proposal::Outcome::kCandidate;
    repo.copies[request.worktree]["x.txt"] = std::to_string(10 + request.experiment_id);
    p.description = "x=" + std::to_string(10 + request.experiment_id);
    p.params_json = "{\"x\":" + std::to_string(request.experiment_id) + "}";
    return p;
  };
  RunLoop("workers = 4\n[stop]\nmax_experiments = 5\n");
  ASSERT_EQ(ledger.experiments.size(), 5u);
  // #2 to #5 start together after the baseline: each later one is told the
  // points of those proposed before it in the same pass.
  EXPECT_EQ(seen[3].count("{\"x\":2}"), 1u);
  EXPECT_EQ(seen[5], (std::set<std::string>{"{\"x\":2}", "{\"x\":3}", "{\"x\":4}"}));
}

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
  // Called by three hooks for each, it is named once.
  EXPECT_EQ(Exp(2).mechanisms, (std::vector<std::string>{"veto-odd"}));
  EXPECT_EQ(Exp(3).mechanisms, (std::vector<std::string>{"veto-odd"}));
  EXPECT_EQ(mechanism->results, 3);
  EXPECT_EQ((ledger.mechanism_calls[{"veto-odd", "before_propose"}]), 2);
  EXPECT_EQ((ledger.mechanism_calls[{"veto-odd", "on_candidate"}]), 2);
  EXPECT_EQ((ledger.mechanism_calls[{"veto-odd", "on_result"}]), 3);
}

}  // namespace
}  // namespace ratchet
