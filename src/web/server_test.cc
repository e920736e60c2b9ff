#include "web/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "store/sqlite_ledger.h"
#include "web/loop_directory.h"
#include "web/testing/loop_fixture.h"
#include "web/testing/raw_http.h"

namespace ratchet {
namespace {

namespace fs = std::filesystem;

// The whole content of a file ("" when missing).
std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ratchet_web_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / ".ratchet");
    // The test plays `ratchet run`: the writer of a real SQLite ledger.
    std::string err;
    ASSERT_TRUE(
        SqliteLedger::Open((dir_ / ".ratchet" / "ledger.db").string(), true, false, &writer_)
            .Report(&err))
        << err;
    FixtureOptions options;
    options.git = false;
    ASSERT_TRUE(WriteLoopFixture(dir_.string(), writer_.get(), options, &summary_, &err)) << err;
    ASSERT_TRUE(OpenLoopDirectory(dir_.string(), &source_, &err)) << err;
  }
  void TearDown() override {
    if (server_) server_->Stop();
    fs::remove_all(dir_);
  }
  // Starts the server on a free port.
  void Start(ServeOptions options = {}) {
    options.port = 0;
    options.poll_s = 0.05;
    server_ = std::make_unique<DashboardServer>(options, std::move(source_));
    std::string err;
    ASSERT_TRUE(server_->Start(&err)) << err;
    port_ = server_->port();
  }

  fs::path dir_;
  std::unique_ptr<SqliteLedger> writer_;
  FixtureSummary summary_;
  std::unique_ptr<LoopDirectory> source_;
  std::unique_ptr<DashboardServer> server_;
  int port_ = 0;
};

TEST_F(ServerTest, ServesThePageAndState) {
  Start();
  RawResponse page = RawGet(port_, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<script src=\"app.js\">"), std::string::npos);
  EXPECT_EQ(RawGet(port_, "/app.js").status, 200);
  EXPECT_EQ(RawGet(port_, "/app.css").status, 200);

  RawResponse state = RawGet(port_, "/api/state");
  ASSERT_EQ(state.status, 200) << state.body;
  auto j = nlohmann::json::parse(state.body);
  EXPECT_EQ(j["n"], 30);
  EXPECT_EQ(j["cols"]["id"].size(), 30u);
  EXPECT_EQ(j["cols"]["metric"].size(), 30u);
  EXPECT_EQ(j["cols"]["metric"][0], 1.0);  // the baseline's val_bpb
  EXPECT_EQ(j["metric_names"], nlohmann::json({"peak_mem_mb", "training_seconds"}));
  EXPECT_EQ(j["cols"]["metrics"][0].size(), 30u);
  EXPECT_EQ(j["baseline_ids"], nlohmann::json({1}));
  EXPECT_FALSE(j["cols"].contains("cost"));  // no proposer spent anything
  std::vector<Experiment> all;
  std::string err;
  ASSERT_TRUE(writer_->LoadExperiments(&all, &err)) << err;
  EXPECT_NEAR(j["t0"].get<double>() + j["cols"]["start"][1].get<double>() / 10, all[1].started_at,
              0.051);
  EXPECT_EQ(j["loop"]["metric"], "val_bpb");
  EXPECT_EQ(j["loop"]["target"], 0.9);
  EXPECT_EQ(j["cols"]["id"][0], 1);
  EXPECT_EQ(j["cols"]["desc"][0], "baseline");
  EXPECT_EQ(j["statuses"][j["cols"]["status"][0].get<int>()], "keep");
  auto part = nlohmann::json::parse(RawGet(port_, "/api/state?from=29").body);
  EXPECT_EQ(part["n"], 2);
  EXPECT_EQ(part["cols"]["id"][0], 29);
  EXPECT_EQ(RawGet(port_, "/api/state?from=abc").status, 400);
  // Never compressed: on loopback it only costs time (seconds for a big loop).
  RawResponse plain = RawGet(port_, "/api/state", "Accept-Encoding: gzip, deflate, br\r\n");
  EXPECT_EQ(plain.head.find("Content-Encoding"), std::string::npos) << plain.head;
  EXPECT_EQ(nlohmann::json::parse(plain.body)["n"], 30);

  RawResponse detail = RawGet(port_, "/api/experiment/2");
  ASSERT_EQ(detail.status, 200) << detail.body;
  auto d = nlohmann::json::parse(detail.body);
  EXPECT_EQ(d["experiment"]["id"], 2);
  EXPECT_NE(d["log"]["text"].get<std::string>().find("step 39"), std::string::npos);
  EXPECT_FALSE(d["diff"]["error"].is_null());  // no git in this loop: said so
  ASSERT_EQ(d["runs"].size(), 1u);
  const auto& curve = d["runs"][0]["curve"];
  ASSERT_GE(curve.size(), 4u) << "the run's learning curve";
  EXPECT_TRUE(curve[0]["v"].contains("loss"));
  EXPECT_LT(curve[0]["t"].get<double>(), curve[1]["t"].get<double>());
  EXPECT_TRUE(d["reference"].is_null()) << "no commits, so no keep it was proposed from";
  EXPECT_EQ(RawGet(port_, "/api/experiment/999").status, 404);
}

TEST_F(ServerTest, NoPathOutsideTheAssets) {
  Start();
  for (const char* target :
       {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/app.js/../../etc/passwd",
        "/..%2f..%2f..%2fetc%2fpasswd", "/api/../../etc/passwd",
        "/api/experiment/1/../../../../etc/passwd", "/.ratchet/ledger.db", "/ratchet.toml",
        "/.ratchet/runs/2/run.log", "//etc/passwd", "/index.html%00.js", "/assets/app.js",
        "/%2fetc%2fpasswd", "/api/experiment/-1", "/api/experiment/1%20OR%201=1"}) {
    RawResponse res = RawGet(port_, target);
    EXPECT_TRUE(res.status == 404 || res.status == 400) << target << " -> " << res.status;
    EXPECT_EQ(res.body.find("root:"), std::string::npos) << target;
    EXPECT_EQ(res.body.find("step 39"), std::string::npos) << target;
    EXPECT_EQ(res.body.find("[edit]"), std::string::npos) << target;
  }
}

TEST_F(ServerTest, NoRequestWritesTheLedger) {
  Start();
  const fs::path db = dir_ / ".ratchet" / "ledger.db";
  auto files = [&] { return Slurp(db) + "|" + Slurp(db.string() + "-wal"); };
  const std::string before = files();
  ASSERT_GT(before.size(), 4096u);
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    for (const char* target : {"/", "/api/state", "/api/experiment/1", "/api/events"}) {
      RawResponse res =
          RawRequest(port_, std::string(method) + " " + target +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
                                "Content-Type: application/json\r\nConnection: close\r\n\r\n{}");
      EXPECT_GE(res.status, 400) << method << " " << target;
    }
  }
  for (const char* target :
       {"/api/state?from=1;DELETE%20FROM%20experiments", "/api/state?from=1%27%3BDROP%20TABLE",
        "/api/experiment/1", "/api/experiment/2", "/api/state", "/?token=x"}) {
    RawGet(port_, target);
  }
  // Byte for byte: the database and its write-ahead log are untouched.
  EXPECT_TRUE(files() == before);
  std::vector<Experiment> all;
  std::string err;
  ASSERT_TRUE(writer_->LoadExperiments(&all, &err)) << err;
  EXPECT_EQ(all.size(), 30u);
}

TEST_F(ServerTest, TokenIsRequiredWhenSet) {
  ServeOptions options;
  options.token = "s3cret/token";
  Start(options);
  EXPECT_EQ(RawGet(port_, "/").status, 401);
  EXPECT_EQ(RawGet(port_, "/api/state").status, 401);
  EXPECT_EQ(RawGet(port_, "/api/events").status, 401);
  EXPECT_EQ(RawGet(port_, "/api/state?token=wrong").status, 401);
  EXPECT_EQ(RawGet(port_, "/api/state", "Authorization: Bearer s3cret/token\r\n").status, 200);
  RawResponse page = RawGet(port_, "/?token=s3cret%2Ftoken");
  ASSERT_EQ(page.status, 200);
  // The page's own files are fetched with the token too.
  EXPECT_NE(page.body.find("app.js?token=s3cret%2Ftoken"), std::string::npos);
  EXPECT_NE(page.body.find("/api/state?from=1&token=s3cret%2Ftoken"), std::string::npos);
  EXPECT_EQ(page.body.find("{{"), std::string::npos);
  EXPECT_EQ(RawGet(port_, "/app.js?token=s3cret%2Ftoken").status, 200);
}

TEST_F(ServerTest, LoopbackWithoutTokenChecksHost) {
  Start();
  RawResponse res = RawRequest(port_,
                               "GET /api/state HTTP/1.1\r\nHost: attacker.example:8420\r\n"
                               "Connection: close\r\n\r\n");
  EXPECT_EQ(res.status, 403);
}

TEST_F(ServerTest, NonLoopbackWithoutTokenRefusesToStart) {
  ServeOptions options;
  options.host = "0.0.0.0";
  DashboardServer server(options, std::move(source_));
  std::string err;
  EXPECT_FALSE(server.Start(&err));
  EXPECT_NE(err.find("--token"), std::string::npos) << err;
}

TEST_F(ServerTest, EventsFollowTheLedgerAndLiveStatus) {
  Start();
  EventStream events(port_, "/api/events");
  size_t at = events.WaitFor("event: ledger\ndata: {\"version\":1}", 0, 5);
  ASSERT_NE(at, std::string::npos) << events.text();

  std::string err;
  FixtureSummary summary;
  ASSERT_TRUE(
      AppendFixtureExperiment(dir_.string(), writer_.get(), "appended", 0.8, &summary, &err))
      << err;
  at = events.WaitFor("event: ledger\ndata: {\"version\":", at, 5);
  ASSERT_NE(at, std::string::npos) << events.text();
  auto j = nlohmann::json::parse(RawGet(port_, "/api/state?from=31").body);
  ASSERT_EQ(j["n"], 1);
  EXPECT_EQ(j["cols"]["desc"][0], "appended");

  ASSERT_TRUE(WriteFixtureLive(dir_.string(), getpid(), 32, "running", 12, "step 5", &err));
  at = events.WaitFor("\"experiment_id\":32", at, 5);
  ASSERT_NE(at, std::string::npos) << events.text();
}

TEST(LoopDirectoryTest, LogTailStaysInsideTheLoop) {
  fs::path dir = fs::temp_directory_path() / ("ratchet_tail_" + std::to_string(getpid()));
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "logs" / "a.log") << std::string(100, 'x') << "\nlast line\n";
  fs::create_symlink("/etc/passwd", dir / "logs" / "escape.log");
  std::string text, err;
  bool truncated = false;
  ASSERT_TRUE(ReadTailInside(dir.string(), "logs/a.log", 20, &text, &truncated, &err)) << err;
  EXPECT_TRUE(truncated);
  EXPECT_EQ(text, "last line\n");
  EXPECT_FALSE(ReadTailInside(dir.string(), "../../../etc/passwd", 100, &text, &truncated, &err));
  EXPECT_FALSE(ReadTailInside(dir.string(), "/etc/passwd", 100, &text, &truncated, &err));
  EXPECT_FALSE(ReadTailInside(dir.string(), "logs/escape.log", 100, &text, &truncated, &err));
  EXPECT_NE(err.find("outside"), std::string::npos) << err;
  fs::remove_all(dir);
}

TEST(LoopDirectoryTest, TheDetailCarriesTheCurveOfTheKeepItWasProposedFrom) {
  fs::path dir = fs::temp_directory_path() / ("ratchet_curve_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / ".ratchet");
  std::unique_ptr<SqliteLedger> writer;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open((dir / ".ratchet" / "ledger.db").string(), true, false, &writer)
                  .Report(&err))
      << err;
  FixtureOptions options;
  options.experiments = 12;
  FixtureSummary summary;
  ASSERT_TRUE(WriteLoopFixture(dir.string(), writer.get(), options, &summary, &err)) << err;
  std::vector<Experiment> all;
  ASSERT_TRUE(writer->LoadExperiments(&all, &err)) << err;
  // The last experiment's parent is the latest keep before it.
  const Experiment& last = all.back();
  int parent_id = 0;
  for (const Experiment& e : all)
    if (e.id < last.id && e.status == Status::kKeep && e.candidate_commit == last.parent_commit)
      parent_id = e.id;
  ASSERT_GT(parent_id, 0);

  std::unique_ptr<LoopDirectory> source;
  ASSERT_TRUE(OpenLoopDirectory(dir.string(), &source, &err)) << err;
  ServeOptions serve;
  serve.port = 0;
  DashboardServer server(serve, std::move(source));
  ASSERT_TRUE(server.Start(&err)) << err;
  RawResponse detail = RawGet(server.port(), "/api/experiment/" + std::to_string(last.id));
  server.Stop();
  ASSERT_EQ(detail.status, 200) << detail.body;
  auto d = nlohmann::json::parse(detail.body);
  ASSERT_TRUE(d["reference"].is_object()) << detail.body.substr(0, 400);
  EXPECT_EQ(d["reference"]["id"], parent_id);
  EXPECT_EQ(d["reference"]["curve"].size(), 10u);
  EXPECT_FALSE(d["runs"][0]["curve"].empty());
  fs::remove_all(dir);
}

TEST(LoopDirectoryTest, DiffComesFromGitAndAMissingCommitIsSaid) {
  fs::path dir = fs::temp_directory_path() / ("ratchet_diff_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / ".ratchet");
  std::unique_ptr<SqliteLedger> writer;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open((dir / ".ratchet" / "ledger.db").string(), true, false, &writer)
                  .Report(&err))
      << err;
  FixtureOptions options;
  options.experiments = 3;
  FixtureSummary summary;
  ASSERT_TRUE(WriteLoopFixture(dir.string(), writer.get(), options, &summary, &err)) << err;
  Experiment gone;
  gone.id = 4;
  gone.phase = Phase::kDone;
  gone.status = Status::kDiscard;
  gone.parent_commit = summary.incumbent;
  gone.candidate_commit = "89abcdef0123456789abcdef0123456789abcdef";
  ASSERT_TRUE(writer->InsertExperiment(&gone, &err)) << err;

  std::unique_ptr<LoopDirectory> loop;
  ASSERT_TRUE(OpenLoopDirectory(dir.string(), &loop, &err)) << err;
  LedgerView view;
  ASSERT_TRUE(loop->LoadLedger(&view, &err)) << err;
  ASSERT_EQ(view.experiments.size(), 4u);
  ExperimentDetail detail;
  ASSERT_TRUE(loop->LoadDetail(view.experiments[1], nullptr, &detail, &err)) << err;
  EXPECT_TRUE(detail.diff_error.empty()) << detail.diff_error;
  EXPECT_NE(detail.diff.find("train.cfg"), std::string::npos) << detail.diff;
  EXPECT_NE(detail.diff.find("+lr = "), std::string::npos) << detail.diff;

  detail = ExperimentDetail();
  ASSERT_TRUE(loop->LoadDetail(view.experiments[3], nullptr, &detail, &err)) << err;
  EXPECT_TRUE(detail.diff.empty());
  EXPECT_NE(detail.diff_error.find("89abcdef01 is not in the repository"), std::string::npos)
      << detail.diff_error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ratchet
