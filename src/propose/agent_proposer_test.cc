#include "propose/agent_proposer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>

#include "core/engine.h"
#include "core/testing/fakes.h"
#include "propose/registry.h"
#include "store/ledger_files.h"
#include "vcs/file_state_guard.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

// A Claude Code style report that spent `cost` dollars.
std::string Report(const std::string& text, double cost, int in = 100, int out = 20) {
  return "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"" + text +
         "\",\"total_cost_usd\":" + std::to_string(cost) +
         ",\"usage\":{\"input_tokens\":" + std::to_string(in) +
         ",\"output_tokens\":" + std::to_string(out) + "}}\n";
}

RunResult TimedOut(const std::string& output) {
  RunResult r;
  r.end = RunResult::End::kTimedOut;
  r.tail = output;
  r.wall_s = 30;
  return r;
}

// A loop on fakes whose proposer is the agent proposer; the "agent" is a
// function that edits the fake tree and returns what the CLI would print.
class AgentLoopTest : public ::testing::Test {
 protected:
  AgentLoopTest() : repo({{"x.txt", "1"}, {"run.sh", "score it"}}), workspace(&repo) {
    workspace.files["program.md"] = "Lower the score by editing x.txt.\n";
    runner.handler = [this](const RunSpec& spec) -> RunResult {
      if (spec.argv.at(0) == "claude") {
        agent_specs.push_back(spec);
        if (agents.empty()) return Exited(0, Report("DESCRIPTION: nothing to do", 0));
        auto agent = agents.front();
        agents.pop_front();
        return agent(spec);
      }
      double x = std::stod(repo.copies.at(spec.cwd).at("x.txt"));
      return Exited(0, "---\nscore: " + std::to_string((x - 7) * (x - 7)) + "\n", 10);
    };
    steps.handler = runner.handler;
  }

  LoopConfig Config(const std::string& extra = "") {
    LoopConfig c;
    std::string err;
    EXPECT_TRUE(ParseLoopConfig(R"(
[edit]
files = ["x.txt"]
protected = ["run.sh"]
[metric]
name = "score"
goal = "min"
[run]
command = "sh run.sh"
budget = "10s"
timeout = "30s"
[sandbox]
required = false
[propose]
kind = "agent"
[propose.agent]
command = ["claude", "-p", "--output-format", "json", "--model", "{model}"]
model = "sonnet"
timeout = "30s"
)" + extra,
                                "ratchet.toml", &c, &err))
        << err;
    return c;
  }

  StopSummary RunLoop(const std::string& extra) {
    LoopConfig config = Config(extra);
    ProposerDeps pdeps{&runner, &workspace, &clock, FileStateGuard::Factory(&ledger_files)};
    std::string err;
    std::unique_ptr<Proposer> proposer = CreateProposer("agent", config, pdeps, &err);
    EXPECT_TRUE(proposer) << err;
    EngineDeps d;
    d.clock = &clock;
    d.steps = &steps;
    d.repo = &repo;
    d.workspace = &workspace;
    d.ledger = &ledger;
    d.proposer = proposer.get();
    Engine engine(config, d);
    StopSummary summary;
    EXPECT_TRUE(engine.Preflight(&err)) << err;
    EXPECT_TRUE(engine.Run(&summary, &err)) << err;
    return summary;
  }

  // Queues an agent that sets x.txt and reports `cost`.
  void AgentSets(int x, double cost = 0.1) {
    agents.push_back([this, x, cost](const RunSpec& spec) {
      repo.copies[spec.cwd]["x.txt"] = std::to_string(x);
      return Exited(0, Report("Set x.\\nDESCRIPTION: set x to " + std::to_string(x), cost));
    });
  }
  void AgentDoes(std::function<RunResult(const RunSpec&)> agent) { agents.push_back(agent); }

  const Experiment& Exp(int id) { return ledger.experiments.at(id - 1); }

  // Experiment `id` of the fake loop in /loop, for a proposer called directly.
  static ProposalRequest Request(int id, const LoopConfig& config,
                                 const std::vector<Experiment>& history) {
    ProposalRequest r;
    r.experiment_id = id;
    r.worktree = "/loop";
    r.run_dir = "/loop/.ratchet/runs/" + std::to_string(id);
    r.config = &config;
    r.history = &history;
    return r;
  }

  FakeClock clock;
  FakeRepo repo;
  FakeWorkspace workspace;
  FakeRunner runner;  // the proposer's processes
  LedgerFiles ledger_files;      // what the real guard keeps by inode
  FakeStepRunner steps{&clock};  // the engine's
  FakeLedger ledger;
  std::deque<std::function<RunResult(const RunSpec&)>> agents;
  std::vector<RunSpec> agent_specs;
};

TEST_F(AgentLoopTest, RunsTheAgentWithThePromptAndReadsItsReport) {
  AgentSets(5, 0.25);
  StopSummary s = RunLoop("[stop]\nmax_experiments = 2\n");
  ASSERT_EQ(agent_specs.size(), 1u);
  const RunSpec& spec = agent_specs[0];
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"claude", "-p", "--output-format", "json",
                                                 "--model", "sonnet"}));
  EXPECT_EQ(spec.cwd, "/loop/.ratchet/work/2") << "the agent edits its working copy";
  EXPECT_EQ(spec.timeout_s, 30);
  EXPECT_EQ(spec.log_path, "/loop/.ratchet/runs/2/agent.log");
  // No sandbox from the engine: .git read-only, and each entry of .ratchet
  // but the agents' homes (none exist in this fake loop).
  EXPECT_EQ(spec.readonly_paths, (std::vector<std::string>{"/loop/.git"}));
  EXPECT_FALSE(spec.sandbox.enabled);
  EXPECT_EQ(spec.stop_signal, SIGINT);  // Claude Code reports when interrupted
  ASSERT_TRUE(spec.stdin_data);
  // The prompt on stdin is exactly the one kept in the run folder.
  EXPECT_EQ(*spec.stdin_data, workspace.files.at(".ratchet/runs/2/prompt.md"));
  EXPECT_NE(spec.stdin_data->find("Lower the score by editing x.txt."), std::string::npos);
  EXPECT_NE(spec.stdin_data->find("| 1 | keep | 36 | baseline | baseline |"), std::string::npos);
  std::map<std::string, std::string> env(spec.env.begin(), spec.env.end());
  EXPECT_EQ(env["RATCHET_PROMPT_FILE"], "/loop/.ratchet/runs/2/prompt.md");
  EXPECT_EQ(env["HOME"], "/loop/.ratchet/homes/2");  // a scratch home of its own

  const Experiment& e = Exp(2);
  EXPECT_EQ(e.status, Status::kKeep);
  EXPECT_EQ(e.proposer, "agent");
  EXPECT_EQ(e.description, "set x to 5");
  EXPECT_EQ(e.usage.input_tokens, 100);
  EXPECT_EQ(e.usage.output_tokens, 20);
  EXPECT_DOUBLE_EQ(e.usage.cost_usd, 0.25);
  const std::string record = workspace.files.at(".ratchet/runs/2/agent.json");
  EXPECT_NE(record.find("\"cost_usd\": 0.25"), std::string::npos) << record;
  EXPECT_NE(record.find("\"guard\": \"clean\""), std::string::npos) << record;
  EXPECT_EQ(s.experiments, 2);
}

TEST_F(AgentLoopTest, PromptFileInputAndPlaceholders) {
  AgentSets(6);
  LoopConfig config = Config();
  std::string err;
  ConfigSection section;
  ASSERT_TRUE(ConfigSection::Parse(
      "[propose.agent]\ncommand = [\"claude\", \"--message-file\", \"{prompt_file}\", "
      "\"--msg\", \"{prompt}\", \"#{experiment} in {run_dir}\"]\ninput = \"file\"\n",
      "ratchet.toml", &section, &err))
      << err;
  config.propose_sections["agent"] = section.Table("propose").Table("agent");
  ProposerDeps pdeps{&runner, &workspace, &clock, FileStateGuard::Factory(&ledger_files)};
  auto proposer = CreateProposer("agent", config, pdeps, &err);
  ASSERT_TRUE(proposer) << err;
  std::vector<Experiment> history;
  ProposalRequest r = Request(3, config, history);
  Proposal p = proposer->Propose(r);
  EXPECT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  ASSERT_EQ(agent_specs.size(), 1u);
  const RunSpec& spec = agent_specs[0];
  EXPECT_FALSE(spec.stdin_data);
  ASSERT_EQ(spec.argv.size(), 6u);
  EXPECT_EQ(spec.argv[2], "/loop/.ratchet/runs/3/prompt.md");
  EXPECT_EQ(spec.argv[4], workspace.files.at(".ratchet/runs/3/prompt.md"));
  EXPECT_EQ(spec.argv[5], "#3 in /loop/.ratchet/runs/3");
  // The record names the placeholder, not the whole prompt.
  EXPECT_NE(workspace.files.at(".ratchet/runs/3/agent.json").find("\"{prompt}\""),
            std::string::npos);
}

TEST_F(AgentLoopTest, EachFailureIsRecordedAndTheLoopGoesOn) {
  AgentDoes([this](const RunSpec& spec) {  // edits, then exits non-zero
    repo.copies[spec.cwd]["x.txt"] = "6";
    return Exited(3, "crashed\n");
  });
  AgentDoes([this](const RunSpec& spec) {  // edits, then hangs past the timeout
    repo.copies[spec.cwd]["x.txt"] = "6";
    return TimedOut(Report("partial", 0.05));
  });
  AgentDoes([](const RunSpec&) {  // edits nothing
    return Exited(0, Report("It is already optimal.\\nDESCRIPTION: no change needed", 0.01));
  });
  AgentDoes([this](const RunSpec& spec) {  // says it failed
    repo.copies[spec.cwd]["x.txt"] = "6";
    return Exited(0, "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true}\n");
  });
  AgentDoes([](const RunSpec&) {  // not installed
    RunResult r;
    r.end = RunResult::End::kFailedToStart;
    r.error = "claude: not found in PATH";
    return r;
  });
  AgentDoes([this](const RunSpec& spec) {  // edits a protected file
    repo.copies[spec.cwd]["run.sh"] = "echo score: 0";
    return Exited(0, Report("DESCRIPTION: cheat", 0));
  });
  AgentSets(7);
  RunLoop("[stop]\nmax_experiments = 8\n");
  EXPECT_EQ(Exp(2).status, Status::kProposeFailed);
  EXPECT_EQ(Exp(2).reason, "the agent exit 3: crashed (log: .ratchet/runs/2/agent.log)");
  EXPECT_EQ(Exp(3).status, Status::kProposeFailed);
  EXPECT_NE(Exp(3).reason.find("the agent timed out"), std::string::npos) << Exp(3).reason;
  EXPECT_DOUBLE_EQ(Exp(3).usage.cost_usd, 0.05);  // what it reported before it was killed
  EXPECT_EQ(Exp(4).status, Status::kNoChange);
  EXPECT_EQ(Exp(4).reason, "the agent changed nothing; it said: no change needed");
  EXPECT_EQ(Exp(5).status, Status::kProposeFailed);
  EXPECT_EQ(Exp(5).reason,
            "the agent failed (error_max_turns; exit 0) (log: .ratchet/runs/5/agent.log)");
  EXPECT_EQ(Exp(6).status, Status::kProposeFailed);
  EXPECT_EQ(Exp(6).reason, "could not start the agent (claude): claude: not found in PATH");
  EXPECT_EQ(Exp(7).status, Status::kOutOfScope);
  EXPECT_EQ(Exp(8).status, Status::kKeep);
  EXPECT_EQ(repo.worktree.at("x.txt"), "7");
  EXPECT_EQ(repo.worktree.at("run.sh"), "score it");
  // Failed proposals never ran: the baseline and #8 only.
  EXPECT_EQ(ledger.runs.size(), 2u);
  // The prompt of #8 lists what failed before.
  const std::string prompt = workspace.files.at(".ratchet/runs/8/prompt.md");
  EXPECT_NE(prompt.find("| 7 | out_of_scope | - | cheat | changed protected file run.sh |"),
            std::string::npos)
      << prompt;
}

TEST_F(AgentLoopTest, CostStopFiresAtTheConfiguredSpend) {
  for (int i = 0; i < 10; ++i) AgentSets(6 - (i % 2), 0.1);
  StopSummary s = RunLoop("[stop]\ncost_usd = 0.25\n");
  // 0.1 + 0.1 = 0.2 < 0.25 goes on; after the third, 0.3 >= 0.25 stops.
  EXPECT_EQ(s.experiments, 4);
  EXPECT_EQ(s.reason, "spent $0.30 of stop.cost_usd $0.25");
}

TEST_F(AgentLoopTest, TokenStopFiresAtTheConfiguredCount) {
  for (int i = 0; i < 10; ++i) AgentSets(6 - (i % 2), 0);  // 120 tokens each
  StopSummary s = RunLoop("[stop]\ntokens = 300\n");
  EXPECT_EQ(s.experiments, 4);
  EXPECT_EQ(s.reason, "used 360 tokens of stop.tokens 300");
}

TEST_F(AgentLoopTest, CircuitBreakerFiresAfterConsecutiveFailures) {
  AgentSets(6);  // a keep resets the count
  AgentDoes([](const RunSpec&) { return Exited(1, "boom\n"); });
  AgentDoes([](const RunSpec&) { return Exited(0, Report("DESCRIPTION: nothing", 0)); });
  AgentDoes([](const RunSpec&) { return TimedOut(""); });
  for (int i = 0; i < 10; ++i) AgentDoes([](const RunSpec&) { return Exited(1, "boom\n"); });
  StopSummary s = RunLoop("[stop]\nconsecutive_failures = 3\nmax_experiments = 20\n");
  EXPECT_EQ(s.experiments, 5);
  EXPECT_EQ(s.reason,
            "circuit breaker: 3 failed experiments in a row (last: #5 propose_failed: the agent "
            "timed out after 30.0s (log: .ratchet/runs/5/agent.log))");
}

TEST_F(AgentLoopTest, MissingProgramIsAConfigError) {
  workspace.files.erase("program.md");
  LoopConfig config = Config();
  ProposerDeps pdeps{&runner, &workspace, &clock, FileStateGuard::Factory(&ledger_files)};
  std::string err;
  EXPECT_FALSE(CreateProposer("agent", config, pdeps, &err));
  EXPECT_NE(err.find("program.md is not in the loop directory"), std::string::npos) << err;
}

TEST_F(AgentLoopTest, TheCliOwnErrorIsTheReason) {
  AgentDoes([this](const RunSpec& spec) {
    repo.copies[spec.cwd]["x.txt"] = "6";
    return Exited(1,
                  R"({"type":"result","subtype":"success","is_error":true,"api_error_status":529,)"
                  R"("api_error_type":"overloaded_error","result":"API Error: 529 Overloaded",)"
                  R"("total_cost_usd":0.01})"
                  "\n");
  });
  AgentDoes([](const RunSpec&) {  // exit 0, but the report says it failed
    return Exited(0, R"({"type":"result","subtype":"success","is_error":true,)"
                     R"("api_error_status":401,"result":"Invalid API key"})"
                     "\n");
  });
  AgentDoes([](const RunSpec&) {  // Codex: a retry, then the turn fails
    return Exited(1, R"j({"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"})j"
                     "\n"
                     R"({"type":"turn.failed","error":{"message":"unexpected status 429 Too Many Requests"}})"
                     "\n");
  });
  AgentDoes([](const RunSpec&) {  // Claude Code retrying an outage when the timeout came
    return TimedOut(R"({"type":"system","subtype":"api_retry","attempt":3,"max_retries":10,)"
                    R"("error_status":529,"error":"overloaded"})"
                    "\n");
  });
  RunLoop("[stop]\nmax_experiments = 5\n");
  EXPECT_EQ(Exp(2).reason,
            "the agent failed: API Error: 529 Overloaded (HTTP 529 overloaded_error; exit 1) (log: "
            ".ratchet/runs/2/agent.log)");
  EXPECT_DOUBLE_EQ(Exp(2).usage.cost_usd, 0.01);
  EXPECT_EQ(Exp(3).status, Status::kProposeFailed);
  EXPECT_EQ(Exp(3).reason,
            "the agent failed: Invalid API key (HTTP 401; exit 0) (log: .ratchet/runs/3/agent.log)");
  EXPECT_EQ(Exp(4).reason,
            "the agent failed: unexpected status 429 Too Many Requests (turn.failed, HTTP 429; "
            "exit 1) (log: .ratchet/runs/4/agent.log)");
  EXPECT_EQ(Exp(5).reason,
            "the agent timed out after 30.0s; its API was failing: API error 529 (overloaded), "
            "retry 3 of 10 (log: .ratchet/runs/5/agent.log)");
}

TEST_F(AgentLoopTest, ARecoveredRetryIsNotAFailure) {
  AgentDoes([this](const RunSpec& spec) {
    repo.copies[spec.cwd]["x.txt"] = "6";
    return Exited(0, R"j({"type":"error","message":"Reconnecting... 1/5 (stream disconnected)"})j"
                     "\n"
                     R"({"type":"item.completed","item":{"type":"agent_message","text":"DESCRIPTION: x to 6"}})"
                     "\n"
                     R"({"type":"turn.completed","usage":{"input_tokens":900,"output_tokens":30}})"
                     "\n");
  });
  RunLoop("[stop]\nmax_experiments = 2\n");
  EXPECT_EQ(Exp(2).status, Status::kKeep) << Exp(2).reason;
  EXPECT_EQ(Exp(2).description, "x to 6");
  EXPECT_EQ(Exp(2).usage.input_tokens, 900);
}

TEST_F(AgentLoopTest, NoReportWithACostStopIsAWarning) {
  AgentSets(6, 0.1);
  AgentDoes([this](const RunSpec& spec) {
    repo.copies[spec.cwd]["x.txt"] = "7";
    return Exited(0, "edited x.txt\nDESCRIPTION: x to 7\n");
  });
  RunLoop("[stop]\nmax_experiments = 3\ncost_usd = 5\n");
  EXPECT_EQ(Exp(3).status, Status::kKeep) << Exp(3).reason;  // a warning, not a failure
  const std::string with_report = workspace.files.at(".ratchet/runs/2/agent.json");
  EXPECT_NE(with_report.find("\"warnings\": []"), std::string::npos) << with_report;
  const std::string record = workspace.files.at(".ratchet/runs/3/agent.json");
  EXPECT_NE(record.find("the agent printed no usage report, so its spend is not counted towards "
                        "stop.cost_usd"),
            std::string::npos)
      << record;
}

TEST_F(AgentLoopTest, TheEngineSandboxIsUsedWithNetworkAndItsHome) {
  LoopConfig config = Config(
      "env = { CLAUDE_CODE_MAX_RETRIES = \"2\" }\n"
      "prices = { \"gw-model\" = { input = 1, output = 2, cache_read = 0, cache_write = 0 } }\n");
  ProposerDeps pdeps{&runner, &workspace, &clock, FileStateGuard::Factory(&ledger_files)};
  std::string err;
  auto proposer = CreateProposer("agent", config, pdeps, &err);
  ASSERT_TRUE(proposer) << err;
  std::vector<Experiment> history;
  ProposalRequest r = Request(3, config, history);
  r.sandbox.enabled = true;
  r.sandbox.home = "/scratch/home-3";
  r.sandbox.mounts = {{"/loop", "", Mount::Kind::kWritable}};
  AgentDoes([](const RunSpec&) {  // killed mid-stream, on a model priced in the config
    return TimedOut(R"({"type":"stream_event","event":{"type":"message_start","message":)"
                    R"({"id":"m1","model":"gw-model","usage":{"input_tokens":1000000,)"
                    R"("output_tokens":500000}}}})"
                    "\n");
  });
  Proposal p = proposer->Propose(r);
  ASSERT_EQ(agent_specs.size(), 1u);
  const RunSpec& spec = agent_specs[0];
  EXPECT_TRUE(spec.sandbox.enabled);
  EXPECT_TRUE(spec.sandbox.network);  // it must reach its API
  EXPECT_EQ(spec.sandbox.home, "/scratch/home-3");
  ASSERT_EQ(spec.sandbox.mounts.size(), 1u);
  EXPECT_TRUE(spec.readonly_paths.empty());
  std::map<std::string, std::string> env(spec.env.begin(), spec.env.end());
  EXPECT_EQ(env.count("HOME"), 0u);  // the sandbox sets it, to where it binds the home
  EXPECT_EQ(env["CLAUDE_CODE_MAX_RETRIES"], "2");
  EXPECT_EQ(p.usage.input_tokens, 1000000);
  EXPECT_DOUBLE_EQ(p.usage.cost_usd, 2.0);  // $1 + 0.5 M x $2

  // A sandbox without a home from the engine gets one of ours, bound there.
  r.sandbox.home.clear();
  proposer->Propose(r);
  ASSERT_EQ(agent_specs.size(), 2u);
  EXPECT_EQ(agent_specs[1].sandbox.home, "/loop/.ratchet/homes/3");
  agent_specs.pop_back();
  r.sandbox.home = "/scratch/home-3";

  // The loop can keep the agent off the network, and its env off ratchet's.
  config = Config("network = false\n");
  proposer = CreateProposer("agent", config, pdeps, &err);
  ASSERT_TRUE(proposer) << err;
  proposer->Propose(r);
  ASSERT_EQ(agent_specs.size(), 2u);
  EXPECT_FALSE(agent_specs[1].sandbox.network);
  config = Config("env = { HOME = \"/root\" }\n");
  EXPECT_FALSE(CreateProposer("agent", config, pdeps, &err));
  EXPECT_NE(err.find("HOME is ratchet's to set for the agent"), std::string::npos) << err;
  config = Config("prices = { \"m\" = { input = 1 } }\n");
  EXPECT_FALSE(CreateProposer("agent", config, pdeps, &err));
  EXPECT_NE(err.find("needs output"), std::string::npos) << err;
}

// The guard, with the agent writing real files in a real loop folder.
class AgentGuardTest : public AgentLoopTest {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ratchet-agent-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root = tmpl;
    fs::create_directories(root / ".git/refs/heads");
    fs::create_directories(root / ".ratchet/runs/2");
    std::ofstream(root / ".git/HEAD") << "ref: refs/heads/main\n";
    std::ofstream(root / ".ratchet/ledger.db") << "ledger bytes";
    fs::create_directories(root / ".ratchet/work/2");
    workspace.set_root(root.string());
  }
  void TearDown() override { fs::remove_all(root); }

  Proposal ProposeIn() {
    LoopConfig config = Config();
    ProposerDeps pdeps{&runner, &workspace, &clock, FileStateGuard::Factory(&ledger_files)};
    std::string err;
    auto proposer = CreateProposer("agent", config, pdeps, &err);
    EXPECT_TRUE(proposer) << err;
    std::vector<Experiment> history;
    ProposalRequest r;
    r.experiment_id = 2;
    r.worktree = (root / ".ratchet/work/2").string();  // its working copy
    r.run_dir = (root / ".ratchet/runs/2").string();
    r.config = &config;
    r.history = &history;
    return proposer->Propose(r);
  }
  std::string Read(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path root;
};

TEST_F(AgentGuardTest, WritingTheLedgerFailsTheProposalAndIsUndone) {
  AgentDoes([this](const RunSpec&) {
    std::ofstream(root / ".ratchet/ledger.db", std::ios::app) << " forged";
    std::ofstream(root / ".git/HEAD") << "ref: refs/heads/other\n";
    return Exited(0, Report("DESCRIPTION: improved things", 0.2));
  });
  Proposal p = ProposeIn();
  EXPECT_EQ(p.outcome, Proposal::Outcome::kFailed);
  EXPECT_FALSE(p.stop_loop);
  EXPECT_EQ(p.reason,
            "the agent changed .git/HEAD, .ratchet/ledger.db (put back); .git and .ratchet are "
            "ratchet's, the agent must not write them (log: .ratchet/runs/2/agent.log)");
  EXPECT_DOUBLE_EQ(p.usage.cost_usd, 0.2);  // spent all the same
  EXPECT_EQ(Read(root / ".ratchet/ledger.db"), "ledger bytes");
  EXPECT_EQ(Read(root / ".git/HEAD"), "ref: refs/heads/main\n");
}

TEST_F(AgentGuardTest, TheScratchHomeIsTheAgentsAndGoesAway) {
  fs::path home;
  std::vector<std::string> readonly;
  AgentDoes([&](const RunSpec& spec) {
    for (const auto& [k, v] : spec.env)
      if (k == "HOME") home = v;
    readonly = spec.readonly_paths;
    // What Claude Code keeps: its session, the memory folder it points the
    // model at, its config.
    fs::create_directories(home / ".claude/projects/-loop/memory");
    std::ofstream(home / ".claude/projects/-loop/memory/notes.md") << "remember: x";
    std::ofstream(home / ".claude.json") << "{}";
    repo.copies[spec.cwd]["x.txt"] = "6";
    return Exited(0, Report("DESCRIPTION: x to 6", 0.1));
  });
  Proposal p = ProposeIn();
  EXPECT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  EXPECT_EQ(home, root / ".ratchet/homes/2");
  EXPECT_FALSE(fs::exists(home)) << "the scratch home outlived the experiment";
  // Without the engine's sandbox, all of .git and .ratchet is read-only but
  // the homes and the working copies, the guard's links to the ledger included.
  std::sort(readonly.begin(), readonly.end());
  EXPECT_EQ(readonly, (std::vector<std::string>{(root / ".git").string(),
                                                (root / ".ratchet/guard").string(),
                                                (root / ".ratchet/ledger.db").string(),
                                                (root / ".ratchet/runs").string()}));
}

TEST_F(AgentGuardTest, WipingRatchetStateStopsTheLoop) {
  AgentDoes([this](const RunSpec&) {
    fs::remove_all(root / ".ratchet");
    return Exited(0, Report("DESCRIPTION: cleaned up", 0));
  });
  Proposal p = ProposeIn();
  EXPECT_EQ(p.outcome, Proposal::Outcome::kFailed);
  EXPECT_TRUE(p.stop_loop);
  EXPECT_NE(p.reason.find("ratchet cannot go on writing to it"), std::string::npos) << p.reason;
}

// The engine's side of Proposal::stop_loop.
TEST(ProposalStopTest, EngineRecordsTheExperimentAndStops) {
  FakeClock clock;
  FakeRepo repo(FileMap{{"x.txt", "1"}});
  FakeWorkspace workspace(&repo);
  FakeStepRunner steps(&clock);
  steps.handler = [](const RunSpec&) { return Exited(0, "---\nscore: 1\n"); };
  FakeLedger ledger;
  FakeProposer proposer;
  proposer.edit = [](const ProposalRequest&) {
    Proposal p;
    p.reason = "the ledger is gone";
    p.stop_loop = true;
    return p;
  };
  LoopConfig config;
  std::string err;
  ASSERT_TRUE(
      ParseLoopConfig("[edit]\nfiles = [\"x.txt\"]\n[metric]\nname = \"score\"\ngoal = "
                      "\"min\"\n[run]\ncommand = \"x\"\n"
                      "budget = 1\n[stop]\nmax_experiments = 10\n",
                      "ratchet.toml", &config, &err))
      << err;
  EngineDeps d;
  d.clock = &clock;
  d.steps = &steps;
  d.repo = &repo;
  d.workspace = &workspace;
  d.ledger = &ledger;
  d.proposer = &proposer;
  config.sandbox.required = false;
  Engine engine(config, d);
  StopSummary s;
  ASSERT_TRUE(engine.Run(&s, &err)) << err;
  EXPECT_EQ(s.experiments, 2);
  EXPECT_EQ(ledger.experiments.at(1).status, Status::kProposeFailed);
  EXPECT_EQ(s.reason, "the proposer cannot go on: the ledger is gone");
}

}  // namespace
}  // namespace ratchet
