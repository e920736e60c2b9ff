// The outer loop around an in-process loop (SimLoop): its decisions are
// events with reasons, mechanisms it switches on are called (the counts show
// it), and mechanisms that fail, are never called or do not help are retired
// while the loop goes on. External mechanisms are real programs
// (tests/mechanisms/); their files are kept in a real folder.
#include "outer/outer_loop.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "outer/sim_loop.h"
#include "outer/test_trace.h"
#include "vcs/workspace_fs.h"

namespace ratchet {
namespace {

const std::string kDir = RATCHET_MECHANISMS_DIR;

struct Event {
  int experiment;
  std::string kind;
  nlohmann::json detail;
};

class Events : public EventSink {
 public:
  void Record(int id, const std::string& kind, const std::string& detail) override {
    list.push_back({id, kind, nlohmann::json::parse(detail)});
  }
  /// "mechanism" events about `name` with `action`.
  std::vector<Event> About(const std::string& name, const std::string& action) const {
    std::vector<Event> out;
    for (const Event& e : list)
      if (e.kind == "mechanism" && e.detail.value("mechanism", "") == name &&
          e.detail.value("action", "") == action)
        out.push_back(e);
    return out;
  }
  std::vector<Event> list;
};

class OuterLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/outer-loop-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    workspace_ = std::make_unique<FsWorkspace>(dir_);
    config_.metric_name = "score";
    space_ = testing::SmallSpace();
  }

  /// Runs `budget` experiments of local search under the outer loop.
  std::unique_ptr<OuterLoop> RunLoop(const OuterConfig& outer, const Objective& f, int budget,
                                     SimLoop** sim_out = nullptr) {
    OuterDeps deps;
    deps.workspace = workspace_.get();
    deps.space = &space_;
    deps.seed = 1;
    auto loop = std::make_unique<OuterLoop>(outer, config_, deps);
    std::string err;
    EXPECT_TRUE(loop->Install(&hooks_, {}, &err)) << err;
    SearchOptions search;
    search.algorithm = Algorithm::kLocal;
    sim_ = std::make_unique<SimLoop>(&space_, search, config_, &hooks_, loop.get(), &events_);
    EXPECT_TRUE(sim_->Run({0.5, 0.5, 5}, f, budget, &err)) << err;
    if (sim_out) *sim_out = sim_.get();
    return loop;
  }

  long long Calls(const std::string& mechanism, const std::string& hook) const {
    auto it = sim_->calls().find({mechanism, hook});
    return it == sim_->calls().end() ? 0 : it->second;
  }

  std::string dir_;
  std::unique_ptr<FsWorkspace> workspace_;
  LoopConfig config_;
  SearchSpace space_;
  HookSet hooks_;
  Events events_;
  std::unique_ptr<SimLoop> sim_;
};

// A landscape with no way down from the start: the loop is stuck at once.
std::optional<double> Flat(const Point&, int) { return 1.0; }

TEST_F(OuterLoopTest, InstallsTheTunerAndTheMechanismsOnAtTheStart) {
  OuterConfig outer;
  auto loop = RunLoop(outer, Flat, 1);
  EXPECT_EQ(hooks_.Names(), (std::vector<std::string>{"tuner", "tabu", "explore", "restart"}));
  const std::vector<Event> on = events_.About("explore", "on");
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].experiment, 1);  // recorded with the first experiment of the session
  EXPECT_EQ(on[0].detail["reason"], "on at the start ([outer] mechanisms)");
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/.ratchet/mechanisms/explore/manifest.json"));
}

TEST_F(OuterLoopTest, StuckLoopIsSteeredAndEveryDecisionIsAnEventWithItsReason) {
  OuterConfig outer;  // every 5, mechanism_every 10, stuck after 8
  outer.pool = {"tabu", "bandit", "explore", "restart"};
  auto loop = RunLoop(outer, Flat, 30);
  std::vector<int> level15, level2;
  for (const Event& e : events_.list) {
    if (e.kind != "outer") continue;
    if (e.detail["level"] == "1.5") {
      level15.push_back(e.experiment);
      EXPECT_FALSE(e.detail["reason"].get<std::string>().empty());
    } else {
      level2.push_back(e.experiment);
    }
  }
  EXPECT_EQ(level15, (std::vector<int>{5, 10, 15, 20, 25, 30}));
  EXPECT_EQ(level2, (std::vector<int>{10, 20, 30}));
  // Stuck from the start: the tuner explores more.
  bool explored_more = false;
  for (const Event& e : events_.list)
    if (e.kind == "outer" && e.detail["level"] == "1.5" &&
        e.detail["reason"].get<std::string>().find("no improvement") != std::string::npos)
      explored_more = true;
  EXPECT_TRUE(explored_more);
  // The stuck-time mechanisms ran, and the ledger would say so.
  EXPECT_GT(Calls("explore", "before_propose"), 0);
  EXPECT_GT(Calls("tuner", "before_propose"), 0);
  int forced = 0;
  for (const Experiment& e : sim_->history()) {
    if (std::find(e.mechanisms.begin(), e.mechanisms.end(), "explore") != e.mechanisms.end())
      ++forced;
  }
  EXPECT_GT(forced, 0);
  const OuterLoop::Managed* explore = nullptr;
  for (const auto& m : loop->managed())
    if (m.name == "explore") explore = &m;
  ASSERT_TRUE(explore);
  EXPECT_GE(explore->mechanism->acted().size(), 5u);
  // Level 2 tried the built-in that was off, since the loop was stuck.
  const std::vector<Event> bandit_on = events_.About("bandit", "on");
  ASSERT_FALSE(bandit_on.empty());
  EXPECT_NE(bandit_on[0].detail["reason"].get<std::string>().find("stuck for"), std::string::npos);
  EXPECT_GT(Calls("bandit", "before_propose"), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/.ratchet/mechanisms/explore/effect.json"));
}

TEST_F(OuterLoopTest, AMechanismThatCrashesLiveIsRetiredAndTheLoopGoesOn) {
  OuterConfig outer;
  outer.mechanisms = {};
  ExternalSpec spec;
  spec.name = "late-crash";
  // Passes its check (a handful of calls), then crashes live.
  spec.command = {"sh", kDir + "/misbehave.sh", "crash", "before_propose", "8"};
  outer.external = {spec};
  auto loop = RunLoop(outer, Flat, 15);
  ASSERT_EQ(events_.About("late-crash", "checked").size(), 1u);
  ASSERT_EQ(events_.About("late-crash", "on").size(), 1u);
  const std::vector<Event> retired = events_.About("late-crash", "retired");
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0].detail["kind"], "crash");
  EXPECT_NE(retired[0].detail["reason"].get<std::string>().find("exit 3"), std::string::npos);
  EXPECT_EQ(retired[0].experiment, 10);  // its 9th before_propose came before #10
  EXPECT_EQ(sim_->history().size(), 15u);
  const std::vector<std::string> names = hooks_.Names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "late-crash"), names.end());
  EXPECT_EQ(Calls("late-crash", "before_propose"), 9);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/.ratchet/mechanisms/late-crash/check.json"));
}

TEST_F(OuterLoopTest, AMechanismThatIsNeverCalledIsRetired) {
  OuterConfig outer;
  outer.mechanisms = {};
  ExternalSpec spec;
  spec.name = "silent";  // takes only accept; every candidate crashes, so accept never comes
  spec.command = {"sh", kDir + "/misbehave.sh", "silent"};
  outer.external = {spec};
  auto crashes = [](const Point& p, int run) -> std::optional<double> {
    (void)p;
    if (run == 0) return 1.0;
    return std::nullopt;
  };
  auto loop = RunLoop(outer, crashes, 12);
  ASSERT_EQ(events_.About("silent", "on").size(), 1u);
  const std::vector<Event> retired = events_.About("silent", "retired");
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0].detail["kind"], "never_called");
  EXPECT_EQ(retired[0].experiment, 10);
  EXPECT_EQ(Calls("silent", "accept"), 0);
}

TEST_F(OuterLoopTest, AMechanismThatDoesNotHelpIsRetiredWithItsEffect) {
  OuterConfig outer;
  outer.mechanisms = {};
  outer.min_acted = 5;
  ExternalSpec spec;
  spec.name = "chatty";  // gives guidance every time: it acts, and nothing improves
  spec.command = {"sh", kDir + "/good.sh"};
  outer.external = {spec};
  auto loop = RunLoop(outer, Flat, 10);
  const std::vector<Event> retired = events_.About("chatty", "retired");
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_NE(retired[0].detail["reason"].get<std::string>().find(
                "did not help: 0 keeps in 9 experiments it acted on"),
            std::string::npos)
      << retired[0].detail.dump();
  // The effect is kept with it.
  std::string effect, err;
  ASSERT_TRUE(workspace_->ReadFile(".ratchet/mechanisms/chatty/effect.json", &effect, &err));
  EXPECT_NE(effect.find("\"acted\": 9"), std::string::npos) << effect;
  std::string manifest;
  ASSERT_TRUE(workspace_->ReadFile(".ratchet/mechanisms/chatty/manifest.json", &manifest, &err));
  EXPECT_NE(manifest.find("\"state\": \"retired\""), std::string::npos) << manifest;
}

TEST_F(OuterLoopTest, AMechanismThatFailsItsCheckIsNeverSwitchedOn) {
  OuterConfig outer;
  outer.mechanisms = {};
  ExternalSpec spec;
  spec.name = "garbage";
  spec.command = {"sh", kDir + "/misbehave.sh", "garbage"};
  outer.external = {spec};
  auto loop = RunLoop(outer, Flat, 3);
  const std::vector<Event> failed = events_.About("garbage", "check_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].detail["kind"], "garbage");
  EXPECT_TRUE(events_.About("garbage", "on").empty());
  EXPECT_EQ(Calls("garbage", "before_propose"), 0);
}

}  // namespace
}  // namespace ratchet
