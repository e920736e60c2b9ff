#include "store/sqlite_ledger.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

/// A record with every field set to something derived from `id`, so a reader
/// can tell a complete row from a torn or mixed one.
Experiment MakeExperiment(int id, Phase phase) {
  Experiment e;
  e.id = id;
  e.session_id = 1 + id / 10;
  e.phase = phase;
  const bool done = phase == Phase::kDone;
  e.status = done ? (id % 2 ? Status::kKeep : Status::kDiscard) : Status::kNone;
  e.baseline = id == 1;
  e.parent_commit = std::string(40, 'a' + id % 6);
  e.proposer = "script";
  e.description = "exp " + std::to_string(id) + " with\ttab, \"quotes\" and ünïcode";
  e.started_at = 1764680000.0 + id;
  if (!done) return e;
  e.reason = "reason " + std::to_string(id);
  e.candidate_commit = std::string(40, 'b' + id % 5);
  e.hypothesis = "hypothesis " + std::to_string(id);
  e.params_json = "{\"lr\":" + std::to_string(id) + "}";
  e.metric = 1.0 / id;
  e.metric_stddev = 0.001 * id;
  e.metric_n = 3;
  e.metrics = {{"val_bpb", 1.0 / id}, {"peak_mem_mb", 100.0 * id}, {"tokens", 1e9 + id}};
  e.finished_at = e.started_at + 0.5;
  e.propose_s = 0.1 * id;
  e.build_s = 0.2;
  e.run_s = 0.3 + id;
  e.cpu_s = 0.25;
  e.peak_rss_mb = 12.5 * id;
  e.exit_code = id % 3;
  e.signal = id % 4 == 0 ? 9 : 0;
  e.diff_stat = std::to_string(id) + " files, +3 -1";
  e.files_changed = {"train.py", "src/x" + std::to_string(id) + ".py"};
  e.log_path = ".ratchet/runs/" + std::to_string(id) + "/run.log";
  e.usage = {1000LL * id, 50LL * id, 0.01 * id};
  e.mechanisms = {"plateau", "noise"};
  return e;
}

/// Inserts `e`; the ledger must give it the id it already has.
bool Insert(Ledger* ledger, Experiment e, std::string* err) {
  const int want = e.id;
  if (!ledger->InsertExperiment(&e, err)) return false;
  if (e.id != want) {
    *err = "the ledger numbered it " + std::to_string(e.id) + ", not " + std::to_string(want);
    return false;
  }
  return true;
}

RunRecord MakeRun(int id, int attempt) {
  RunRecord r;
  r.experiment_id = id;
  r.attempt = attempt;
  r.purpose = attempt == 1 ? "main" : "confirm";
  r.exit_code = 0;
  r.signal = attempt == 3 ? 15 : 0;
  r.timed_out = attempt == 3;
  r.wall_s = 1.5 * attempt;
  r.cpu_s = 1.25;
  r.peak_rss_mb = 64;
  if (attempt != 3) r.metric = 0.5 + attempt;
  r.metrics = {{"val_bpb", 0.5 + attempt}, {"steps", 100}};
  r.log_path = ".ratchet/runs/" + std::to_string(id) + "/run" + std::to_string(attempt) + ".log";
  return r;
}

/// Compares every field, one by one, so a column dropped on either side shows.
void ExpectSame(const Experiment& a, const Experiment& b) {
  SCOPED_TRACE("experiment " + std::to_string(a.id));
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.session_id, b.session_id);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.baseline, b.baseline);
  EXPECT_EQ(a.parent_commit, b.parent_commit);
  EXPECT_EQ(a.candidate_commit, b.candidate_commit);
  EXPECT_EQ(a.proposer, b.proposer);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.hypothesis, b.hypothesis);
  EXPECT_EQ(a.params_json, b.params_json);
  EXPECT_EQ(a.metric, b.metric);
  EXPECT_EQ(a.metric_stddev, b.metric_stddev);
  EXPECT_EQ(a.metric_n, b.metric_n);
  EXPECT_EQ(a.metrics, b.metrics);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.propose_s, b.propose_s);
  EXPECT_EQ(a.build_s, b.build_s);
  EXPECT_EQ(a.run_s, b.run_s);
  EXPECT_EQ(a.cpu_s, b.cpu_s);
  EXPECT_EQ(a.peak_rss_mb, b.peak_rss_mb);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.signal, b.signal);
  EXPECT_EQ(a.diff_stat, b.diff_stat);
  EXPECT_EQ(a.files_changed, b.files_changed);
  EXPECT_EQ(a.log_path, b.log_path);
  EXPECT_EQ(a.usage.input_tokens, b.usage.input_tokens);
  EXPECT_EQ(a.usage.output_tokens, b.usage.output_tokens);
  EXPECT_EQ(a.usage.cost_usd, b.usage.cost_usd);
  EXPECT_EQ(a.mechanisms, b.mechanisms);
}

void ExpectSame(const RunRecord& a, const RunRecord& b) {
  EXPECT_EQ(a.experiment_id, b.experiment_id);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.purpose, b.purpose);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.signal, b.signal);
  EXPECT_EQ(a.timed_out, b.timed_out);
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.cpu_s, b.cpu_s);
  EXPECT_EQ(a.peak_rss_mb, b.peak_rss_mb);
  EXPECT_EQ(a.metric, b.metric);
  EXPECT_EQ(a.metrics, b.metrics);
  EXPECT_EQ(a.log_path, b.log_path);
}

/// Runs a statement on the file directly (to forge ledgers the API refuses).
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* msg = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg), SQLITE_OK) << (msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
}

std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

class SqliteLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(SqliteLedger::Open(path_, true, false, &ledger_).Report(&err_)) << err_;
  }

  TempDir dir_;
  std::string path_ = dir_ / "ledger.db";
  std::unique_ptr<SqliteLedger> ledger_;
  std::string err_;
};

TEST_F(SqliteLedgerTest, ExperimentRoundTripsEveryField) {
  Experiment proposing = MakeExperiment(1, Phase::kProposing);
  ASSERT_TRUE(Insert(ledger_.get(), proposing, &err_)) << err_;
  std::vector<Experiment> rows;
  ASSERT_TRUE(ledger_->LoadExperiments(&rows, &err_)) << err_;
  ASSERT_EQ(rows.size(), 1u);
  ExpectSame(rows[0], proposing);
  EXPECT_FALSE(rows[0].metric.has_value());

  Experiment done = MakeExperiment(1, Phase::kDone);
  ASSERT_TRUE(ledger_->UpdateExperiment(done, &err_)) << err_;
  ASSERT_TRUE(ledger_->LoadExperiments(&rows, &err_)) << err_;
  ASSERT_EQ(rows.size(), 1u);
  ExpectSame(rows[0], done);
}

TEST_F(SqliteLedgerTest, IdsAreAssignedContiguously) {
  Experiment a = MakeExperiment(9, Phase::kProposing), b = a;
  ASSERT_TRUE(ledger_->InsertExperiment(&a, &err_)) << err_;
  ASSERT_TRUE(ledger_->InsertExperiment(&b, &err_)) << err_;
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(b.id, 2);
  EXPECT_FALSE(ledger_->UpdateExperiment(MakeExperiment(7, Phase::kDone), &err_));
  EXPECT_NE(err_.find("no such row"), std::string::npos) << err_;
}

TEST_F(SqliteLedgerTest, RunsRoundTrip) {
  for (int attempt = 1; attempt <= 3; ++attempt)
    ASSERT_TRUE(ledger_->AddRun(MakeRun(4, attempt), &err_)) << err_;
  ASSERT_TRUE(ledger_->AddRun(MakeRun(5, 1), &err_)) << err_;
  EXPECT_FALSE(ledger_->AddRun(MakeRun(4, 2), &err_)) << "one row per attempt";
  std::vector<RunRecord> runs;
  ASSERT_TRUE(ledger_->LoadRuns(4, &runs, &err_)) << err_;
  ASSERT_EQ(runs.size(), 3u);
  for (int i = 0; i < 3; ++i) ExpectSame(runs[i], MakeRun(4, i + 1));
  EXPECT_FALSE(runs[2].metric.has_value());
  ASSERT_TRUE(ledger_->LoadRuns(9, &runs, &err_)) << err_;
  EXPECT_TRUE(runs.empty());
}

TEST_F(SqliteLedgerTest, CurvesRoundTripAndAreJournaled) {
  RunRecord run = MakeRun(4, 1);
  run.curve = {{1.5, {{"loss", 3.25}, {"step", 10}}}, {6.0, {{"loss", std::nan("")}}}};
  ASSERT_TRUE(ledger_->AddRun(run, &err_)) << err_;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(ledger_->LoadRuns(4, &runs, &err_)) << err_;
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].curve.size(), 2u);
  EXPECT_EQ(runs[0].curve[0].t, 1.5);
  EXPECT_EQ(runs[0].curve[0].values.at("loss"), 3.25);
  EXPECT_EQ(runs[0].curve[0].values.at("step"), 10);
  EXPECT_TRUE(std::isnan(runs[0].curve[1].values.at("loss"))) << "a NaN the run printed stays NaN";
  LedgerCheck check;
  ASSERT_TRUE(ledger_->Verify(&check, &err_)) << err_;
  EXPECT_TRUE(check.ok());
}

TEST_F(SqliteLedgerTest, EventsAreSequencedAndFiltered) {
  ASSERT_TRUE(ledger_->AddEvent({0, 10.5, 0, "session_start", "{\"pid\":1}"}, &err_)) << err_;
  ASSERT_TRUE(ledger_->AddEvent({0, 11.5, 3, "gate", ""}, &err_)) << err_;
  ASSERT_TRUE(ledger_->AddEvent({0, 12.5, 3, "stop", "{\"why\":\"target\"}"}, &err_)) << err_;
  std::vector<LedgerEvent> events;
  ASSERT_TRUE(ledger_->LoadEvents(0, &events, &err_)) << err_;
  ASSERT_EQ(events.size(), 3u);
  EXPECT_LT(events[0].seq, events[1].seq);
  EXPECT_EQ(events[0].at, 10.5);
  EXPECT_EQ(events[0].detail_json, "{\"pid\":1}");
  EXPECT_EQ(events[1].experiment_id, 3);
  EXPECT_EQ(events[1].kind, "gate");
  EXPECT_EQ(events[1].detail_json, "{}");
  ASSERT_TRUE(ledger_->LoadEvents(events[1].seq, &events, &err_)) << err_;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "stop");
}

TEST_F(SqliteLedgerTest, Sessions) {
  int a = 0, b = 0;
  ASSERT_TRUE(ledger_->BeginSession({0, 111, 5.0, 0, ""}, &a, &err_)) << err_;
  ASSERT_TRUE(ledger_->BeginSession({0, 222, 9.0, 0, ""}, &b, &err_)) << err_;
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  ASSERT_TRUE(ledger_->EndSession(a, 8.0, "target reached", &err_)) << err_;
  EXPECT_FALSE(ledger_->EndSession(7, 8.0, "x", &err_));
  std::vector<Session> sessions;
  ASSERT_TRUE(ledger_->LoadSessions(&sessions, &err_)) << err_;
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].pid, 111);
  EXPECT_EQ(sessions[0].started_at, 5.0);
  EXPECT_EQ(sessions[0].ended_at, 8.0);
  EXPECT_EQ(sessions[0].stop_reason, "target reached");
  EXPECT_EQ(sessions[1].ended_at, 0);
  EXPECT_EQ(sessions[1].stop_reason, "");
}

TEST_F(SqliteLedgerTest, MetaAndMechanismCalls) {
  std::string value = "stale";
  ASSERT_TRUE(ledger_->GetMeta("metric_name", &value, &err_)) << err_;
  EXPECT_EQ(value, "");
  ASSERT_TRUE(ledger_->SetMeta("metric_name", "val_bpb", &err_)) << err_;
  ASSERT_TRUE(ledger_->SetMeta("metric_name", "loss", &err_)) << err_;
  ASSERT_TRUE(ledger_->GetMeta("metric_name", &value, &err_)) << err_;
  EXPECT_EQ(value, "loss");
  ASSERT_TRUE(ledger_->GetMeta("schema_version", &value, &err_)) << err_;
  EXPECT_EQ(value, "3");

  ASSERT_TRUE(ledger_->AddMechanismCalls("plateau", "before_propose", 2, &err_)) << err_;
  ASSERT_TRUE(ledger_->AddMechanismCalls("plateau", "before_propose", 3, &err_)) << err_;
  ASSERT_TRUE(ledger_->AddMechanismCalls("plateau", "on_result", 1, &err_)) << err_;
  std::map<std::pair<std::string, std::string>, long long> calls;
  ASSERT_TRUE(ledger_->LoadMechanismCalls(&calls, &err_)) << err_;
  EXPECT_EQ(calls, (std::map<std::pair<std::string, std::string>, long long>{
                       {{"plateau", "before_propose"}, 5}, {{"plateau", "on_result"}, 1}}));
}

TEST_F(SqliteLedgerTest, ReopenKeepsEverythingAndUsesWal) {
  for (int id = 1; id <= 3; ++id)
    ASSERT_TRUE(Insert(ledger_.get(), MakeExperiment(id, Phase::kDone), &err_)) << err_;
  ledger_.reset();
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
  ASSERT_TRUE(SqliteLedger::Open(path_, true, false, &ledger_).Report(&err_)) << err_;
  std::vector<Experiment> rows;
  ASSERT_TRUE(ledger_->LoadExperiments(&rows, &err_)) << err_;
  ASSERT_EQ(rows.size(), 3u);
  for (int id = 1; id <= 3; ++id) ExpectSame(rows[id - 1], MakeExperiment(id, Phase::kDone));
  ASSERT_TRUE(Insert(ledger_.get(), MakeExperiment(4, Phase::kProposing), &err_)) << err_;
}

TEST_F(SqliteLedgerTest, ReadOnlyOpenNeverWrites) {
  ASSERT_TRUE(Insert(ledger_.get(), MakeExperiment(1, Phase::kDone), &err_)) << err_;
  ledger_.reset();  // the writer is gone: its WAL has been checkpointed into the file
  const std::string before = ReadText(path_);
  struct stat st_before;
  ASSERT_EQ(::stat(path_.c_str(), &st_before), 0);
  auto listing = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> files_before = listing();

  std::unique_ptr<SqliteLedger> reader;
  ASSERT_TRUE(SqliteLedger::Open(path_, false, true, &reader).Report(&err_)) << err_;
  std::vector<Experiment> rows;
  ASSERT_TRUE(reader->LoadExperiments(&rows, &err_)) << err_;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(Insert(reader.get(), MakeExperiment(2, Phase::kProposing), &err_));
  EXPECT_FALSE(reader->SetMeta("x", "y", &err_));
  reader.reset();

  struct stat st_after;
  ASSERT_EQ(::stat(path_.c_str(), &st_after), 0);
  EXPECT_EQ(ReadText(path_), before);
  EXPECT_EQ(listing(), files_before) << "a reader creates no file, not even SQLite's -wal/-shm";
  EXPECT_EQ(st_after.st_mtim.tv_sec, st_before.st_mtim.tv_sec);
  EXPECT_EQ(st_after.st_mtim.tv_nsec, st_before.st_mtim.tv_nsec);
}

TEST(SqliteLedgerOpen, MissingFileIsNotCreatedByReaders) {
  TempDir dir;
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  const Error missing = SqliteLedger::Open(dir / "ledger.db", false, true, &ledger);
  EXPECT_TRUE(missing.Is(Error::Kind::kNotFound)) << KindName(missing.kind());
  EXPECT_NE(missing.message().find("no ledger at"), std::string::npos) << missing.message();
  EXPECT_FALSE(SqliteLedger::Open(dir / "ledger.db", false, false, &ledger).Report(&err));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "nothing may be created";
}

TEST(SqliteLedgerOpen, RefusesFilesThatAreNotLedgers) {
  TempDir dir;
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  const std::string text = dir / "notes.txt";
  WriteText(text, "this is not a database, but it is long enough to look like a header...\n");
  const Error not_sqlite = SqliteLedger::Open(text, true, false, &ledger);
  EXPECT_TRUE(not_sqlite.Is(Error::Kind::kCorruption)) << KindName(not_sqlite.kind());
  EXPECT_EQ(not_sqlite.message(), text + " is not a ratchet ledger (not an SQLite database)");
  EXPECT_EQ(ReadText(text),
            "this is not a database, but it is long enough to look like a header...\n");

  const std::string other = dir / "other.db";
  RawSql(other, "CREATE TABLE songs (title TEXT)");
  EXPECT_FALSE(SqliteLedger::Open(other, true, false, &ledger).Report(&err));
  EXPECT_NE(err.find("is not a ratchet ledger"), std::string::npos) << err;
  const Error not_ours = SqliteLedger::Open(other, false, true, &ledger);
  EXPECT_TRUE(not_ours.Is(Error::Kind::kCorruption)) << KindName(not_ours.kind());
  EXPECT_NE(not_ours.message().find("is not a ratchet ledger"), std::string::npos);
}

TEST(SqliteLedgerOpen, ADamagedPageIsCorruption) {
  // What `ratchet audit` reports as a problem found, not as bad input.
  TempDir dir;
  const std::string path = dir / "ledger.db";
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open(path, true, false, &ledger).Report(&err)) << err;
  ASSERT_TRUE(Insert(ledger.get(), MakeExperiment(1, Phase::kDone), &err)) << err;
  ledger.reset();  // the last connection checkpoints the log into the file
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  std::string bytes = ReadText(path);
  ASSERT_GT(bytes.size(), 4096u);
  // Keep SQLite's 100-byte header; scribble over the rest of the first page.
  for (size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5);
  WriteText(path, bytes);
  const Error damaged = SqliteLedger::Open(path, false, true, &ledger);
  EXPECT_TRUE(damaged.Is(Error::Kind::kCorruption))
      << KindName(damaged.kind()) << ": " << damaged.message();
  EXPECT_NE(damaged.message().find(path), std::string::npos) << damaged.message();
}

TEST(SqliteLedgerOpen, RefusesANewerSchema) {
  TempDir dir;
  const std::string path = dir / "ledger.db";
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open(path, true, false, &ledger).Report(&err)) << err;
  ledger.reset();
  RawSql(path, "UPDATE meta SET value = '7' WHERE key = 'schema_version'");
  EXPECT_FALSE(SqliteLedger::Open(path, true, false, &ledger).Report(&err));
  EXPECT_NE(err.find("written by a newer ratchet (ledger schema version 7"), std::string::npos)
      << err;
  const Error newer = SqliteLedger::Open(path, false, true, &ledger);
  EXPECT_TRUE(newer.Is(Error::Kind::kNotSupported)) << KindName(newer.kind());
  EXPECT_NE(newer.message().find("newer ratchet"), std::string::npos) << newer.message();
}

TEST(SqliteLedgerOpen, InMemory) {
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open(":memory:", true, false, &ledger).Report(&err)) << err;
  ASSERT_TRUE(Insert(ledger.get(), MakeExperiment(1, Phase::kDone), &err)) << err;
  std::vector<Experiment> rows;
  ASSERT_TRUE(ledger->LoadExperiments(&rows, &err)) << err;
  EXPECT_EQ(rows.size(), 1u);
}

/// Writes experiments from `first` on, forever or up to `last`, each as the
/// engine does (insert, run, update, event), reporting each finished one as a
/// byte on `report_fd`. Runs in a forked child: never returns.
[[noreturn]] void WriterChild(const std::string& path, int first, int last, int report_fd) {
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  if (!SqliteLedger::Open(path, true, false, &ledger).Report(&err)) _exit(2);
  for (int id = first; last == 0 || id <= last; ++id) {
    if (!Insert(ledger.get(), MakeExperiment(id, Phase::kProposing), &err) ||
        !ledger->AddRun(MakeRun(id, 1), &err) ||
        !ledger->UpdateExperiment(MakeExperiment(id, Phase::kDone), &err) ||
        !ledger->AddEvent({0, 1.0 * id, id, "decided", "{}"}, &err)) {
      _exit(3);
    }
    char byte = 1;
    if (report_fd >= 0 && ::write(report_fd, &byte, 1) != 1) _exit(4);
  }
  _exit(0);
}

/// Every row is one of the two complete shapes the writer produces.
void ExpectCompleteRows(const std::vector<Experiment>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].id, static_cast<int>(i) + 1) << "ids are contiguous";
    ExpectSame(rows[i], MakeExperiment(rows[i].id, rows[i].phase));
    ASSERT_TRUE(rows[i].phase == Phase::kProposing || rows[i].phase == Phase::kDone);
  }
}

TEST(SqliteLedgerConcurrency, ReaderSeesConsistentSnapshotsWhileWriting) {
  TempDir dir;
  const std::string path = dir / "ledger.db";
  {
    std::unique_ptr<SqliteLedger> init;
    std::string err;
    ASSERT_TRUE(SqliteLedger::Open(path, true, false, &init).Report(&err)) << err;
  }
  constexpr int kCount = 150;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) WriterChild(path, 1, kCount, -1);

  std::unique_ptr<SqliteLedger> reader;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open(path, false, true, &reader).Report(&err)) << err;
  size_t seen = 0;
  int reads = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen < static_cast<size_t>(kCount) || reads == 0) {
    std::vector<Experiment> rows;
    ASSERT_TRUE(reader->LoadExperiments(&rows, &err)) << err;
    ++reads;
    ASSERT_GE(rows.size(), seen) << "rows never disappear";
    seen = rows.size();
    ExpectCompleteRows(rows);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "writer too slow; saw " << seen;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed: " << status;
  EXPECT_GT(reads, 1);
}

TEST(SqliteLedgerCrash, SigkillMidStreamLeavesCompleteRowsAndLosesNoAcknowledgedWrite) {
  TempDir dir;
  const std::string path = dir / "ledger.db";
  std::mt19937 rng(std::random_device{}());
  int acknowledged = 0;  // experiments fully written, over all rounds
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipe_fds[0]);
      // Resume as the engine does: after the last complete row.
      std::unique_ptr<SqliteLedger> probe;
      std::string err;
      int next = 1;
      std::vector<Experiment> rows;
      if (SqliteLedger::Open(path, true, false, &probe).Report(&err) &&
          probe->LoadExperiments(&rows, &err))
        next = static_cast<int>(rows.size()) + 1;
      if (!rows.empty() && rows.back().phase != Phase::kDone) {
        // The torn last experiment: finish it (and report it) before going on.
        const int id = static_cast<int>(rows.size());
        std::vector<RunRecord> runs;
        if (!probe->LoadRuns(id, &runs, &err) ||
            (runs.empty() && !probe->AddRun(MakeRun(id, 1), &err)) ||
            !probe->UpdateExperiment(MakeExperiment(id, Phase::kDone), &err)) {
          _exit(5);
        }
        char byte = 1;
        if (::write(pipe_fds[1], &byte, 1) != 1) _exit(4);
      }
      probe.reset();
      WriterChild(path, next, 0, pipe_fds[1]);
    }
    ::close(pipe_fds[1]);
    // Let it finish a random number of experiments, then kill it wherever it is.
    const int wait_for = std::uniform_int_distribution<int>(3, 40)(rng);
    int got = 0;
    char buf[64];
    while (got < wait_for) {
      ssize_t n = ::read(pipe_fds[0], buf, std::min<size_t>(sizeof buf, wait_for - got));
      ASSERT_GT(n, 0) << "writer died early";
      got += static_cast<int>(n);
    }
    // A random extra moment, so the kill lands anywhere inside a write.
    // (a busy spin, not a wait for anything: up to 3 ms, about one experiment)
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(std::uniform_int_distribution<int>(0, 3000)(rng));
    while (std::chrono::steady_clock::now() < until) {
    }
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    // Count what the child acknowledged after the bytes we waited for.
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) got += static_cast<int>(n);
    ::close(pipe_fds[0]);
    acknowledged += got;

    EXPECT_EQ(RawQuery(path, "PRAGMA integrity_check"), "ok");
    std::unique_ptr<SqliteLedger> ledger;
    std::string err;
    ASSERT_TRUE(SqliteLedger::Open(path, false, true, &ledger).Report(&err)) << err;
    std::vector<Experiment> rows;
    ASSERT_TRUE(ledger->LoadExperiments(&rows, &err)) << err;
    ExpectCompleteRows(rows);
    int done = 0;
    for (const Experiment& e : rows) done += e.phase == Phase::kDone;
    // A byte was sent only after all four writes returned: each one counted is
    // in the ledger. At most the last experiment is caught half-way.
    EXPECT_GE(done, acknowledged);
    EXPECT_LE(rows.size(), static_cast<size_t>(acknowledged) + 1);
    for (const Experiment& e : rows) {
      std::vector<RunRecord> runs;
      ASSERT_TRUE(ledger->LoadRuns(e.id, &runs, &err)) << err;
      if (e.phase == Phase::kDone) {
        ASSERT_EQ(runs.size(), 1u) << "experiment " << e.id;
        ExpectSame(runs[0], MakeRun(e.id, 1));
      }
    }
    acknowledged = done;  // the next round's child completes a torn last row first
  }
}

}  // namespace
}  // namespace ratchet
