#include "propose/search/search_proposer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ratchet {
namespace {

constexpr const char* kTrain =
    "#include <cstdio>\n"
    "constexpr double MATRIX_LR = 0.04;  // learning rate\n"
    "static const int DEPTH = 4;\n"
    "const char* kAct = \"relu\";\n"
    "int main() { std::printf(\"%d\\n\", DEPTH); }\n";

constexpr const char* kToml = R"(
[edit]
files = ["train.cpp"]
[run]
command = "./train"
budget = "60s"
[metric]
name = "loss"
goal = "GOAL"
constraints = ["mem_mb <= 100"]
[propose]
kind = "search"
[propose.search]
seed = 3
constraints = ["DEPTH <= 6 || MATRIX_LR < 0.05"]
[[propose.search.param]]
name = "MATRIX_LR"
type = "float"
low = 0.001
high = 0.1
log = true
[[propose.search.param]]
name = "DEPTH"
type = "int"
low = 2
high = 8
)";

class SearchProposerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ratchet-search-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Write("train.cpp", kTrain);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& rel, const std::string& content) {
    std::ofstream(dir_ / rel, std::ios::binary) << content;
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ / rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::unique_ptr<SearchProposer> Make(std::string* err, const std::string& goal = "min",
                                       const std::string& extra = "") {
    std::string text = kToml;
    text.replace(text.find("GOAL"), 4, goal);
    text += extra;
    if (!ParseLoopConfig(text, (dir_ / "ratchet.toml").string(), &config_, err)) return nullptr;
    ConfigSection section = config_.propose_sections["search"];
    auto p = SearchProposer::Create(section, config_, ProposerDeps(), err);
    if (p && !section.Finish(err)) return nullptr;
    return p;
  }

  ProposalRequest Request(int id) {
    ProposalRequest r;
    r.experiment_id = id;
    r.worktree = dir_.string();
    r.config = &config_;
    r.history = &history_;
    r.incumbent = incumbent_ >= 0 ? &history_[incumbent_] : nullptr;
    return r;
  }

  Experiment Exp(int id, Status status, const std::string& params, std::optional<double> metric) {
    Experiment e;
    e.id = id;
    e.phase = Phase::kDone;
    e.status = status;
    e.params_json = params;
    e.metric = metric;
    e.baseline = id == 1;
    return e;
  }

  std::filesystem::path dir_;
  LoopConfig config_;
  std::vector<Experiment> history_;
  int incumbent_ = -1;
};

TEST_F(SearchProposerTest, ConstructionChecksTheBindings) {
  std::string err;
  ASSERT_TRUE(Make(&err)) << err;
  Write("train.cpp", "constexpr double MATRIX_LR = 0.04;\n");
  EXPECT_FALSE(Make(&err));
  EXPECT_NE(err.find("train.cpp: constant DEPTH not found"), std::string::npos) << err;
  Write("train.cpp", "constexpr double MATRIX_LR = 0.04;\nconstexpr int DEPTH = 2.5;\n");
  EXPECT_FALSE(Make(&err));
  EXPECT_NE(err.find("train.cpp:2: DEPTH = 2.5 does not fit type int"), std::string::npos) << err;
  Write("train.cpp", "double MATRIX_LR = 0.04;\nint DEPTH = 2;\nvoid f() {\n  DEPTH = 3;\n}\n");
  EXPECT_FALSE(Make(&err));
  EXPECT_NE(err.find("assigned 2 times"), std::string::npos) << err;
}

TEST_F(SearchProposerTest, ProposeWritesOnlyTheLiterals) {
  std::string err;
  auto proposer = Make(&err);
  ASSERT_TRUE(proposer) << err;
  EXPECT_EQ(proposer->kind(), "search");
  history_.push_back(Exp(1, Status::kKeep, "", 2.0));
  incumbent_ = 0;
  const Proposal p = proposer->Propose(Request(2));
  ASSERT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  const nlohmann::json params = nlohmann::json::parse(p.params_json);
  const double lr = params["MATRIX_LR"].get<double>();
  const int depth = params["DEPTH"].get<int>();
  EXPECT_GE(lr, 0.001);
  EXPECT_LE(lr, 0.1);
  EXPECT_TRUE(depth <= 6 || lr < 0.05);
  EXPECT_NE(p.description.find('='), std::string::npos);
  EXPECT_NE(p.hypothesis.find("lhs"), std::string::npos) << p.hypothesis;
  // Every other byte is kept.
  std::string expected = kTrain;
  char lr_text[32];
  std::snprintf(lr_text, sizeof lr_text, "%.4g", lr);
  std::string lr_literal = lr_text;
  if (lr_literal.find_first_of(".e") == std::string::npos) lr_literal += ".0";
  expected.replace(expected.find("0.04"), 4, lr_literal);
  expected.replace(expected.find("= 4;"), 4, "= " + std::to_string(depth) + ";");
  EXPECT_EQ(Read("train.cpp"), expected);
}

// The loop's files through the Workspace port, real underneath, with every
// read and write recorded by absolute path.
class RecordingWorkspace : public Workspace {
 public:
  RecordingWorkspace(std::string root, std::vector<std::string>* log)
      : root_(std::move(root)), log_(log) {}
  const std::string& root() const override { return root_; }
  bool HashFiles(const std::vector<std::string>&, std::map<std::string, std::string>*,
                 std::string*) override {
    return false;
  }
  bool ReadFile(const std::string& rel, std::string* content, std::string* err) override {
    log_->push_back("read " + root_ + "/" + rel);
    std::ifstream in(root_ + "/" + rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    *content = ss.str();
    if (!in) *err = "cannot read " + rel;
    return static_cast<bool>(in);
  }
  bool WriteFile(const std::string& rel, const std::string& content, std::string*) override {
    log_->push_back("write " + root_ + "/" + rel);
    std::ofstream(root_ + "/" + rel, std::ios::binary) << content;
    return true;
  }
  bool AppendFile(const std::string&, const std::string&, std::string*) override { return false; }
  bool MakeDirs(const std::string&, std::string*) override { return false; }
  bool Exists(const std::string&) override { return false; }
  bool RemoveAll(const std::string&, std::string*) override { return false; }
  std::unique_ptr<Workspace> Subtree(const std::string& rel) override {
    return std::make_unique<RecordingWorkspace>(root_ + "/" + rel, log_);
  }

 private:
  std::string root_;
  std::vector<std::string>* log_;
};

TEST_F(SearchProposerTest, TheWorkingCopyIsWrittenThroughTheWorkspacePort) {
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(std::string(kToml).replace(std::string(kToml).find("GOAL"), 4, "min"),
                              (dir_ / "ratchet.toml").string(), &config_, &err))
      << err;
  std::vector<std::string> log;
  RecordingWorkspace loop(dir_.string(), &log);
  ProposerDeps deps;
  deps.workspace = &loop;
  ConfigSection section = config_.propose_sections["search"];
  auto proposer = SearchProposer::Create(section, config_, deps, &err);
  ASSERT_TRUE(proposer) << err;
  EXPECT_EQ(log, std::vector<std::string>{"read " + dir_.string() + "/train.cpp"});
  std::filesystem::create_directories(dir_ / "work/2");
  std::filesystem::copy_file(dir_ / "train.cpp", dir_ / "work/2/train.cpp");
  log.clear();
  ProposalRequest request = Request(2);
  request.worktree = (dir_ / "work/2").string();
  history_.push_back(Exp(1, Status::kKeep, "", 2.0));
  incumbent_ = 0;
  request.history = &history_;
  request.incumbent = &history_[0];
  const Proposal p = proposer->Propose(request);
  ASSERT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  const std::string copy = (dir_ / "work/2/train.cpp").string();
  EXPECT_EQ(log, (std::vector<std::string>{"read " + copy, "write " + copy}));
  EXPECT_EQ(Read("train.cpp"), kTrain) << "the loop directory is not touched";
}

TEST_F(SearchProposerTest, SameHistoryGivesTheSameProposal) {
  std::string err;
  auto a = Make(&err);
  ASSERT_TRUE(a) << err;
  history_ = {Exp(1, Status::kKeep, "", 2.0),
              Exp(2, Status::kDiscard, R"({"MATRIX_LR":0.01,"DEPTH":3})", 2.5),
              Exp(3, Status::kCrash, R"({"MATRIX_LR":0.09,"DEPTH":8})", std::nullopt),
              Exp(4, Status::kDiscard, R"({"MATRIX_LR":0.002,"DEPTH":5})", 2.2),
              Exp(5, Status::kDiscard, R"({"MATRIX_LR":0.02,"DEPTH":2})", 2.1),
              Exp(6, Status::kDiscard, R"({"MATRIX_LR":0.005,"DEPTH":7})", 3.1)};
  incumbent_ = 0;
  const Proposal first = a->Propose(Request(7));
  ASSERT_EQ(first.outcome, Proposal::Outcome::kCandidate) << first.reason;
  Write("train.cpp", kTrain);  // the engine restores the tree
  auto b = Make(&err);         // a resumed loop: a new process, the same ledger
  const Proposal second = b->Propose(Request(7));
  EXPECT_EQ(first.params_json, second.params_json);
  EXPECT_EQ(first.description, second.description);
}

TEST_F(SearchProposerTest, HistoryTeachesResultsFailuresAndTriedPoints) {
  std::string err;
  auto proposer = Make(&err, "max");
  ASSERT_TRUE(proposer) << err;
  history_ = {Exp(1, Status::kKeep, "", 2.0),
              Exp(2, Status::kDiscard, R"({"MATRIX_LR":0.01,"DEPTH":3})", 2.5),
              Exp(3, Status::kCrash, R"({"MATRIX_LR":0.09,"DEPTH":8})", std::nullopt),
              Exp(4, Status::kRejected, R"({"MATRIX_LR":0.002})", std::nullopt),
              Exp(5, Status::kInterrupted, R"({"MATRIX_LR":0.003,"DEPTH":5})", std::nullopt),
              Exp(6, Status::kDiscard, R"({"MATRIX_LR":0.02,"DEPTH":2,"GONE":1})", 2.1),
              Exp(7, Status::kDiscard, R"({"MATRIX_LR":0.5,"DEPTH":2})", 2.1),
              Exp(8, Status::kDiscard, R"({"MATRIX_LR":0.03,"DEPTH":2})", 9.0),
              Exp(9, Status::kTimeout, R"({"MATRIX_LR":0.04,"DEPTH":7})", std::nullopt),
              Exp(10, Status::kPruned, R"({"MATRIX_LR":0.06,"DEPTH":3})", std::nullopt)};
  history_[7].metrics["mem_mb"] = 500;  // breaks [metric] constraints
  incumbent_ = 0;
  const ProposalRequest r = Request(10);
  const std::vector<Observation> obs = proposer->Observations(r, {0.04, 4});
  ASSERT_EQ(obs.size(), 8u);
  EXPECT_EQ(obs[0].point, (Point{0.04, 4}));  // the baseline: the point in the files
  EXPECT_EQ(obs[0].kind, Observation::Kind::kValue);
  EXPECT_DOUBLE_EQ(obs[0].value, -2.0);  // goal max: negated
  EXPECT_EQ(obs[1].kind, Observation::Kind::kValue);
  EXPECT_EQ(obs[2].kind, Observation::Kind::kFailed);
  EXPECT_EQ(obs[3].kind, Observation::Kind::kTried);
  EXPECT_EQ(obs[3].point, (Point{0.002, 4}));          // DEPTH from the incumbent
  EXPECT_EQ(obs[4].point, (Point{0.02, 2}));           // an unknown name is ignored
  EXPECT_EQ(obs[5].kind, Observation::Kind::kFailed);  // mem_mb 500 > 100
  EXPECT_EQ(obs[6].kind, Observation::Kind::kFailed);  // timeout
  // Pruned: known to lose, so the worst value seen (2.0 of the values 2.0,
  // 2.5, 2.1 under goal max), not a failure region.
  EXPECT_EQ(obs[7].kind, Observation::Kind::kValue);
  EXPECT_DOUBLE_EQ(obs[7].value, -2.0);
}

TEST_F(SearchProposerTest, ReapplyWritesAndChecksTheRewrite) {
  std::string err;
  auto proposer = Make(&err);
  ASSERT_TRUE(proposer) << err;
  const ProposalRequest r = Request(2);
  ASSERT_TRUE(proposer->Reapply(r, R"({"MATRIX_LR": 0.002, "DEPTH": 8})", &err)) << err;
  EXPECT_NE(Read("train.cpp").find("MATRIX_LR = 0.002;"), std::string::npos);
  EXPECT_NE(Read("train.cpp").find("DEPTH = 8;"), std::string::npos);
  EXPECT_FALSE(proposer->Reapply(r, R"({"MATRIX_LR": 0.08})", &err));
  EXPECT_NE(err.find("breaks the constraint"), std::string::npos) << err;
  EXPECT_FALSE(proposer->Reapply(r, R"({"DEPTH": 80})", &err));
  EXPECT_NE(err.find("outside"), std::string::npos) << err;
}

TEST_F(SearchProposerTest, HintsAndExhaustion) {
  std::string err;
  auto proposer = Make(&err);
  ASSERT_TRUE(proposer) << err;
  history_.push_back(Exp(1, Status::kKeep, "", 2.0));
  incumbent_ = 0;
  ProposalRequest r = Request(2);
  r.search_hints_json = R"({"explore": 1})";
  Proposal p = proposer->Propose(r);
  EXPECT_EQ(p.outcome, Proposal::Outcome::kFailed);
  EXPECT_NE(p.reason.find("search hints: unknown key 'explore'"), std::string::npos) << p.reason;

  r.search_hints_json = R"({"next": {"DEPTH": 6}})";
  p = proposer->Propose(r);
  ASSERT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  EXPECT_EQ(p.description, "DEPTH=6");
  Write("train.cpp", kTrain);

  // Every DEPTH with MATRIX_LR frozen at the incumbent has been tried.
  for (int d = 2; d <= 8; ++d) {
    if (d == 4) continue;
    history_.push_back(Exp(static_cast<int>(history_.size()) + 1, Status::kDiscard,
                           R"({"MATRIX_LR":0.04,"DEPTH":)" + std::to_string(d) + "}", 3.0));
  }
  r = Request(static_cast<int>(history_.size()) + 1);
  r.search_hints_json = R"({"frozen": ["MATRIX_LR"]})";
  p = proposer->Propose(r);
  EXPECT_EQ(p.outcome, Proposal::Outcome::kNoChange);
  EXPECT_NE(p.reason.find("no admissible point left"), std::string::npos) << p.reason;
  EXPECT_EQ(Read("train.cpp"), kTrain);
}

TEST_F(SearchProposerTest, ExperimentsInFlightAreNotProposedAgain) {
  std::string err;
  auto proposer = Make(&err);
  ASSERT_TRUE(proposer) << err;
  history_.push_back(Exp(1, Status::kKeep, "", 2.0));
  incumbent_ = 0;
  // With MATRIX_LR frozen only DEPTH moves: 4 is the incumbent, 2, 3, 5, 6
  // and 7 are in flight (one of them still being proposed: no params yet).
  std::vector<Experiment> in_flight;
  for (int d : {2, 3, 5, 6, 7}) {
    in_flight.push_back(Exp(d + 10, Status::kNone,
                            R"({"MATRIX_LR":0.04,"DEPTH":)" + std::to_string(d) + "}",
                            std::nullopt));
    in_flight.back().phase = Phase::kBuilding;
  }
  in_flight.push_back(Exp(30, Status::kNone, "", std::nullopt));
  in_flight.back().phase = Phase::kProposing;
  ProposalRequest r = Request(31);
  r.in_flight = &in_flight;
  r.search_hints_json = R"({"frozen": ["MATRIX_LR"]})";
  const std::vector<Point> pending = proposer->Pending(r, {0.04, 4});
  ASSERT_EQ(pending.size(), 5u);
  EXPECT_EQ(pending[0], (Point{0.04, 2}));
  // The baseline in flight is the point in the files.
  std::vector<Experiment> baseline = {Exp(1, Status::kNone, "", std::nullopt)};
  ProposalRequest first = Request(2);
  first.in_flight = &baseline;
  EXPECT_EQ(proposer->Pending(first, {0.04, 4}), (std::vector<Point>{{0.04, 4}}));
  Proposal p = proposer->Propose(r);
  ASSERT_EQ(p.outcome, Proposal::Outcome::kCandidate) << p.reason;
  EXPECT_EQ(p.description, "DEPTH=8");
  EXPECT_NE(p.hypothesis.find("5 in flight"), std::string::npos) << p.hypothesis;
  Write("train.cpp", kTrain);

  // DEPTH 8 in flight too: nothing is left to propose.
  in_flight.push_back(Exp(31, Status::kNone, R"({"MATRIX_LR":0.04,"DEPTH":8})", std::nullopt));
  r = Request(32);
  r.in_flight = &in_flight;
  r.search_hints_json = R"({"frozen": ["MATRIX_LR"]})";
  p = proposer->Propose(r);
  EXPECT_EQ(p.outcome, Proposal::Outcome::kNoChange);
  EXPECT_NE(p.reason.find("or is in flight"), std::string::npos) << p.reason;
  EXPECT_EQ(Read("train.cpp"), kTrain);
}

TEST_F(SearchProposerTest, FactoryBuildsAProposer) {
  std::string text = kToml;
  text.replace(text.find("GOAL"), 4, "min");
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(text, (dir_ / "ratchet.toml").string(), &config_, &err)) << err;
  ConfigSection section = config_.propose_sections["search"];
  std::unique_ptr<Proposer> p = MakeSearchProposer(section, config_, ProposerDeps(), &err);
  ASSERT_TRUE(p) << err;
  EXPECT_EQ(p->kind(), "search");
}

}  // namespace
}  // namespace ratchet
