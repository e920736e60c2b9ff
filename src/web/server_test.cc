#include "web/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/testing/fakes.h"
#include "web/loop_directory.h"
#include "web/testing/loop_fixture.h"
#include "web/testing/raw_http.h"

namespace ratchet {
namespace {

namespace fs = std::filesystem;

// The fake ledger, shared between the server's threads and the test (which
// plays `ratchet run` appending experiments).
class SharedLedger : public Ledger {
 public:
  FakeLedger fake;
  std::mutex mu;
  int writes = 0;
#define LOCKED(call)                    \
  std::lock_guard<std::mutex> lock(mu); \
  return fake.call
#define WRITE(call)                     \
  std::lock_guard<std::mutex> lock(mu); \
  ++writes;                             \
  return fake.call
  bool LoadExperiments(std::vector<Experiment>* out, std::string* err) override {
    LOCKED(LoadExperiments(out, err));
  }
  bool InsertExperiment(const Experiment& e, std::string* err) override {
    WRITE(InsertExperiment(e, err));
  }
  bool UpdateExperiment(const Experiment& e, std::string* err) override {
    WRITE(UpdateExperiment(e, err));
  }
  bool AddRun(const RunRecord& r, std::string* err) override { WRITE(AddRun(r, err)); }
  bool LoadRuns(int id, std::vector<RunRecord>* out, std::string* err) override {
    LOCKED(LoadRuns(id, out, err));
  }
  bool AddEvent(const LedgerEvent& e, std::string* err) override { WRITE(AddEvent(e, err)); }
  bool LoadEvents(long long after, std::vector<LedgerEvent>* out, std::string* err) override {
    LOCKED(LoadEvents(after, out, err));
  }
  bool BeginSession(const Session& s, int* id, std::string* err) override {
    WRITE(BeginSession(s, id, err));
  }
  bool EndSession(int id, double at, const std::string& reason, std::string* err) override {
    WRITE(EndSession(id, at, reason, err));
  }
  bool LoadSessions(std::vector<Session>* out, std::string* err) override {
    LOCKED(LoadSessions(out, err));
  }
  bool SetMeta(const std::string& k, const std::string& v, std::string* err) override {
    WRITE(SetMeta(k, v, err));
  }
  bool GetMeta(const std::string& k, std::string* v, std::string* err) override {
    LOCKED(GetMeta(k, v, err));
  }
  bool AddMechanismCalls(const std::string& m, const std::string& h, long long c,
                         std::string* err) override {
    WRITE(AddMechanismCalls(m, h, c, err));
  }
  bool LoadMechanismCalls(std::map<std::pair<std::string, std::string>, long long>* out,
                          std::string* err) override {
    LOCKED(LoadMechanismCalls(out, err));
  }
#undef LOCKED
#undef WRITE
  int Writes() {
    std::lock_guard<std::mutex> lock(mu);
    return writes;
  }
};

LiveView ReadLiveFile(const std::string& path) {
  LiveView live;
  std::ifstream in(path);
  if (!in) return live;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return live;
  live.present = true;
  live.pid = j.value("pid", 0LL);
  live.alive = live.pid > 0 && (live.pid == getpid());
  live.experiment_id = j.value("experiment_id", 0);
  live.phase = j.value("phase", "");
  live.progress = j.value("progress", "");
  return live;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ratchet_web_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto ledger = std::make_unique<SharedLedger>();
    ledger_ = ledger.get();
    FixtureOptions options;
    options.git = false;
    std::string err;
    ASSERT_TRUE(WriteLoopFixture(dir_.string(), &ledger_->fake, options, &summary_, &err)) << err;
    LoopParts parts;
    parts.dir = dir_.string();
    parts.ledger = std::move(ledger);
    SharedLedger* shared = ledger_;
    parts.ledger_stamp = [shared] { return std::to_string(shared->Writes()); };
    std::string live_path = (dir_ / ".ratchet" / "live.json").string();
    parts.read_live = [live_path] { return ReadLiveFile(live_path); };
    parts.settings.name = "fixture";
    parts.settings.metric_name = "val_bpb";
    parts.settings.target = 0.9;
    source_ = std::make_unique<LoopDirectory>(std::move(parts));
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
  SharedLedger* ledger_ = nullptr;
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
  EXPECT_EQ(j["rows"].size(), 30u);
  EXPECT_EQ(j["loop"]["metric"], "val_bpb");
  EXPECT_EQ(j["loop"]["target"], 0.9);
  EXPECT_EQ(j["rows"][0][0], 1);
  auto part = nlohmann::json::parse(RawGet(port_, "/api/state?from=29").body);
  EXPECT_EQ(part["rows"].size(), 2u);
  EXPECT_EQ(RawGet(port_, "/api/state?from=abc").status, 400);

  RawResponse detail = RawGet(port_, "/api/experiment/2");
  ASSERT_EQ(detail.status, 200) << detail.body;
  auto d = nlohmann::json::parse(detail.body);
  EXPECT_EQ(d["experiment"]["id"], 2);
  EXPECT_NE(d["log"]["text"].get<std::string>().find("step 39"), std::string::npos);
  EXPECT_FALSE(d["diff"]["error"].is_null());  // no git in this loop: said so
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
  int before = ledger_->Writes();
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    for (const char* target : {"/", "/api/state", "/api/experiment/1", "/api/events"}) {
      RawResponse res = RawRequest(
          port_, std::string(method) + " " + target +
                     " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
                     "Content-Type: application/json\r\nConnection: close\r\n\r\n{}");
      EXPECT_GE(res.status, 400) << method << " " << target;
    }
  }
  RawGet(port_, "/api/state?from=1;DELETE%20FROM%20experiments");
  RawGet(port_, "/api/experiment/1");
  EXPECT_EQ(ledger_->Writes(), before);
  std::vector<Experiment> all;
  std::string err;
  ASSERT_TRUE(ledger_->LoadExperiments(&all, &err));
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
  ASSERT_TRUE(AppendFixtureExperiment(dir_.string(), ledger_, "appended", 0.8, &summary, &err))
      << err;
  at = events.WaitFor("event: ledger\ndata: {\"version\":", at, 5);
  ASSERT_NE(at, std::string::npos) << events.text();
  auto j = nlohmann::json::parse(RawGet(port_, "/api/state?from=31").body);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0][4], "appended");

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

TEST(LoopDirectoryTest, MissingCommitIsSaidNotHidden) {
  auto ledger = std::make_unique<FakeLedger>();
  Experiment e;
  e.id = 1;
  e.parent_commit = "0123456789abcdef0123456789abcdef01234567";
  e.candidate_commit = "89abcdef0123456789abcdef0123456789abcdef";
  std::string err;
  ASSERT_TRUE(ledger->InsertExperiment(e, &err));
  LoopParts parts;
  parts.dir = "/nonexistent";
  parts.ledger = std::move(ledger);
  parts.repo = std::make_unique<FakeRepo>(FileMap{{"a", "b"}});
  LoopDirectory loop(std::move(parts));
  ExperimentDetail detail;
  ASSERT_TRUE(loop.LoadDetail(1, &detail, &err)) << err;
  EXPECT_TRUE(detail.diff.empty());
  EXPECT_NE(detail.diff_error.find("is not in the repository"), std::string::npos)
      << detail.diff_error;
}

}  // namespace
}  // namespace ratchet
