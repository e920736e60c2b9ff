#include "notify/ledger_steering.h"

#include <gtest/gtest.h>

#include "core/engine.h"
#include "core/testing/fakes.h"

namespace ratchet {
namespace {

LedgerEvent Event(const std::string& kind, double at, const std::string& detail = "{}") {
  LedgerEvent e;
  e.kind = kind;
  e.at = at;
  e.detail_json = detail;
  return e;
}

void Add(FakeLedger* ledger, const LedgerEvent& e) {
  std::string err;
  ASSERT_TRUE(ledger->AddEvent(e, &err)) << err;
}

TEST(PauseStateTest, TheLastPauseOrResumeWins) {
  EXPECT_FALSE(PauseStateOf({}).paused);
  PauseState s = PauseStateOf({Event("pause", 10), Event("note", 11), Event("resume", 12),
                               Event("pause", 13), Event("stop", 14)});
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.since, 13);
  EXPECT_FALSE(PauseStateOf({Event("pause", 10), Event("resume", 12)}).paused);
  // A state carried over from earlier events stays when nothing changes it.
  EXPECT_TRUE(PauseStateOf({Event("note", 20)}, PauseState{true, 5}).paused);
}

TEST(LedgerSteeringTest, NotesBecomeGuidanceWithTheirTime) {
  FakeLedger ledger;
  LedgerSteering steering(&ledger);
  EXPECT_TRUE(steering.Guidance().empty());
  // 2026-12-03 14:05:30 UTC
  Add(&ledger, Event("note", 1796306730, NoteDetail("try a wider MLP")));
  Add(&ledger, Event("session_start", 1796306731));
  EXPECT_EQ(steering.Guidance(),
            std::vector<std::string>{"note from the user (2026-12-03 14:05 UTC): try a wider MLP"});
  // A note stays for every later proposal; a new one joins it.
  Add(&ledger, Event("note", 1796306790, NoteDetail("and a lower LR")));
  std::vector<std::string> lines = steering.Guidance();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "note from the user (2026-12-03 14:06 UTC): and a lower LR");
  // A note without text is no guidance.
  Add(&ledger, Event("note", 1796306800, "{}"));
  EXPECT_EQ(steering.Guidance().size(), 2u);
}

TEST(LedgerSteeringTest, OnlyTheMostRecentNotes) {
  FakeLedger ledger;
  LedgerSteering::Options options;
  options.max_notes = 3;
  LedgerSteering steering(&ledger, options);
  for (int i = 0; i < 5; ++i) Add(&ledger, Event("note", 0, NoteDetail("n" + std::to_string(i))));
  std::vector<std::string> lines = steering.Guidance();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find(": n2"), std::string::npos);
  EXPECT_NE(lines[2].find(": n4"), std::string::npos);
}

TEST(LedgerSteeringTest, APauseHoldsUntilResumedAndIsToldOnce) {
  FakeLedger ledger;
  LedgerSteering steering(&ledger);
  std::vector<std::string> notes;
  auto note = [&](const std::string& line) { notes.push_back(line); };
  EXPECT_FALSE(steering.Paused(note));
  EXPECT_TRUE(notes.empty());
  Add(&ledger, Event("pause", 1796306730, PauseDetail("ratchet pause")));
  EXPECT_TRUE(steering.Paused(note));
  EXPECT_TRUE(steering.Paused(note));
  ASSERT_EQ(notes.size(), 1u) << "told once per pause";
  EXPECT_EQ(notes[0],
            "paused by the user at 2026-12-03 14:05 UTC; no new experiment starts "
            "(`ratchet resume DIR` goes on)");
  Add(&ledger, Event("resume", 1796306790, PauseDetail("ratchet resume")));
  EXPECT_FALSE(steering.Paused(note));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[1], "resumed by the user");
}

// The engine's two steering hooks: a note reaches the next proposal's
// guidance, and a pause holds the loop before the next experiment.
TEST(LedgerSteeringTest, TheEngineHonoursNotesAndPauses) {
  FakeClock clock;
  FakeRepo repo({{"x.txt", "1"}, {"run.sh", "score"}});
  FakeWorkspace workspace(&repo);
  FakeStepRunner steps(&clock);
  FakeLedger ledger;
  FakeProposer proposer;
  std::vector<std::vector<std::string>> seen;
  proposer.edit = [&](const ProposalRequest& request) {
    seen.push_back(request.guidance);
    FileMap& copy = repo.copies[request.worktree];
    int x = std::stoi(copy.at("x.txt"));
    copy["x.txt"] = std::to_string(x - 1);
    Proposal p;
    p.outcome = Proposal::Outcome::kCandidate;
    p.description = "lower x";
    return p;
  };
  // The baseline runs; then the user leaves a note and pauses the loop,
  // and resumes it a second later (by the fake clock, which the engine's
  // waits move while it is paused).
  bool paused_once = false;
  double paused_at = 0;
  class ResumingSteering : public LedgerSteering {
   public:
    ResumingSteering(Ledger* ledger, FakeClock* clock, double* paused_at)
        : LedgerSteering(ledger), ledger_(ledger), clock_(clock), paused_at_(paused_at) {}
    bool Paused(const std::function<void(const std::string&)>& note) override {
      if (*paused_at_ > 0 && clock_->WallSeconds() > *paused_at_ + 1 && !resumed_) {
        resumed_ = true;
        Add(static_cast<FakeLedger*>(ledger_), Event("resume", clock_->WallSeconds()));
      }
      return LedgerSteering::Paused(note);
    }
   private:
    Ledger* ledger_;
    FakeClock* clock_;
    double* paused_at_;
    bool resumed_ = false;
  } steering(&ledger, &clock, &paused_at);
  steps.handler = [&](const RunSpec& spec) {
    if (!paused_once) {
      paused_once = true;
      paused_at = clock.WallSeconds();
      Add(&ledger, Event("note", 1796306730, NoteDetail("try x below zero")));
      Add(&ledger, Event("pause", 1796306731));
    }
    return Exited(0, "---\nscore: " + repo.copies.at(spec.cwd).at("x.txt") + "\n");
  };
  LoopConfig config;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(R"(
[edit]
files = ["x.txt"]
protected = ["run.sh"]
[run]
command = "sh run.sh"
budget = "1s"
timeout = "5s"
[metric]
name = "score"
goal = "min"
[stop]
max_experiments = 3
[sandbox]
required = false
)",
                              "ratchet.toml", &config, &err))
      << err;
  EngineDeps deps;
  deps.clock = &clock;
  deps.steps = &steps;
  deps.repo = &repo;
  deps.workspace = &workspace;
  deps.ledger = &ledger;
  deps.proposer = &proposer;
  deps.steering = &steering;
  Engine engine(config, deps);
  ASSERT_TRUE(engine.Preflight(&err)) << err;
  StopSummary summary;
  ASSERT_TRUE(engine.Run(&summary, &err)) << err;
  EXPECT_EQ(summary.experiments, 3);

  ASSERT_EQ(seen.size(), 2u);
  const std::string line = "note from the user (2026-12-03 14:05 UTC): try x below zero";
  EXPECT_EQ(seen[0], std::vector<std::string>{line});
  EXPECT_EQ(seen[1], std::vector<std::string>{line}) << "a note stays for later proposals";
  // Experiment 2 started only after the resume, a second after the pause.
  EXPECT_GE(ledger.experiments.at(1).started_at, paused_at + 1.0);
}

}  // namespace
}  // namespace ratchet
