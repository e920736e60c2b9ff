// The ledger's journal on real SQLite files: every write is journaled, a row
// changed by hand is found (naming the field) and put back, and a journal
// changed by hand is found even when its hashes were recomputed, because
// the MAC key is elsewhere.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>

#include "store/journal.h"
#include "store/sqlite_ledger.h"
#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::TempDir;

void Sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* msg = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg), SQLITE_OK) << (msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
}

class LedgerJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("RATCHET_KEY_FILE", (dir_ / "key").c_str(), 1);
    ASSERT_TRUE(SqliteLedger::Open(path_, true, false, &ledger_).Report(&err_)) << err_;
    // A little history, as the engine writes it.
    Experiment e;
    e.phase = Phase::kProposing;
    e.baseline = true;
    ASSERT_TRUE(ledger_->InsertExperiment(&e, &err_)) << err_;
    e.phase = Phase::kDone;
    e.status = Status::kKeep;
    e.metric = 1.5;
    ASSERT_TRUE(ledger_->UpdateExperiment(e, &err_)) << err_;
    RunRecord r;
    r.experiment_id = 1;
    r.purpose = "main";
    r.metric = 1.5;
    r.metrics = {{"score", 1.5}};
    ASSERT_TRUE(ledger_->AddRun(r, &err_)) << err_;
    ASSERT_TRUE(ledger_->SetMeta("noise_sigma", "0.1", &err_)) << err_;
    int session = 0;
    ASSERT_TRUE(ledger_->BeginSession({0, 42, 100.0, 0, ""}, &session, &err_)) << err_;
    ASSERT_TRUE(ledger_->EndSession(session, 200.0, "done", &err_)) << err_;
  }
  void TearDown() override { unsetenv("RATCHET_KEY_FILE"); }

  LedgerCheck Check() {
    LedgerCheck check;
    EXPECT_TRUE(ledger_->Verify(&check, &err_)) << err_;
    return check;
  }

  TempDir dir_;
  std::string path_ = dir_ / "ledger.db";
  std::unique_ptr<SqliteLedger> ledger_;
  std::string err_;
};

TEST_F(LedgerJournalTest, WhatRatchetWroteVerifies) {
  LedgerCheck check = Check();
  EXPECT_TRUE(check.ok()) << (check.row_problems.empty() ? "" : check.row_problems[0]);
  EXPECT_TRUE(check.authenticated);
  EXPECT_GE(check.entries, 7);  // 2 experiment writes, a run, 2 meta (key id, noise), 2 session
  std::vector<JournalEntry> entries;
  ASSERT_TRUE(ledger_->LoadJournal(&entries, &err_)) << err_;
  EXPECT_EQ(entries.front().seq, 1);
  EXPECT_EQ(entries.back().kind, "session");
  // Reopened by another process, it still verifies (the key is on disk).
  ledger_.reset();
  ASSERT_TRUE(SqliteLedger::Open(path_, false, true, &ledger_).Report(&err_)) << err_;
  EXPECT_TRUE(Check().ok());
}

TEST_F(LedgerJournalTest, ARowChangedByHandIsNamedAndPutBack) {
  // A forged keep: the baseline's metric rewritten, as a run could try.
  Sql(path_, "UPDATE experiments SET metric = 0.001 WHERE id = 1");
  LedgerCheck check = Check();
  EXPECT_TRUE(check.journal_problems.empty());
  ASSERT_EQ(check.row_problems.size(), 1u);
  EXPECT_EQ(check.row_problems[0],
            "experiment 1 was changed outside ratchet: metric 0.001 (ratchet wrote 1.5)");
  std::vector<std::string> repaired;
  ASSERT_TRUE(ledger_->Repair(&repaired, &err_)) << err_;
  EXPECT_EQ(repaired, (std::vector<std::string>{"experiment 1"}));
  std::vector<Experiment> rows;
  ASSERT_TRUE(ledger_->LoadExperiments(&rows, &err_)) << err_;
  EXPECT_EQ(*rows[0].metric, 1.5);
  EXPECT_TRUE(Check().ok());
}

TEST_F(LedgerJournalTest, RowsAddedOrDeletedByHandAreFound) {
  Sql(path_, "DELETE FROM runs; INSERT INTO meta (key, value) VALUES ('planted', 'x')");
  LedgerCheck check = Check();
  ASSERT_EQ(check.row_problems.size(), 2u);
  EXPECT_EQ(check.row_problems[0], "meta planted has no journal entry: it was added outside ratchet");
  EXPECT_EQ(check.row_problems[1], "run 1/1 is missing: it was deleted outside ratchet");
  std::vector<std::string> repaired;
  ASSERT_TRUE(ledger_->Repair(&repaired, &err_)) << err_;
  EXPECT_TRUE(Check().ok());
}

TEST_F(LedgerJournalTest, AJournalRewrittenWithItsHashesRecomputedFailsItsMac) {
  // Whoever writes the file can recompute the chain; not the MACs.
  std::vector<JournalEntry> entries;
  ASSERT_TRUE(ledger_->LoadJournal(&entries, &err_)) << err_;
  std::string prev;
  long long forged = 0;
  std::string sql = "BEGIN;";
  for (JournalEntry& e : entries) {
    const size_t at = e.body.find("\"metric\":1.5");
    if (e.kind == "experiment" && at != std::string::npos) {
      e.body.replace(at, 12, "\"metric\":0.1");
      forged = e.seq;
    }
    e.hash = JournalHash(prev, e);
    prev = e.hash;
    char* quoted = sqlite3_mprintf("UPDATE journal SET body = %Q, hash = %Q WHERE seq = %lld;",
                                   e.body.c_str(), e.hash.c_str(), e.seq);
    sql += quoted;
    sqlite3_free(quoted);
  }
  sql += "UPDATE experiments SET metric = 0.1 WHERE id = 1; COMMIT;";
  Sql(path_, sql);
  LedgerCheck check = Check();
  ASSERT_EQ(check.journal_problems.size(), 1u);
  EXPECT_EQ(check.journal_problems[0], "journal entry " + std::to_string(forged) +
                                           " (experiment 1) was rewritten: its MAC does not "
                                           "match the key");
  std::vector<std::string> repaired;
  EXPECT_FALSE(ledger_->Repair(&repaired, &err_));
}

// Rewrites the whole journal as a forger would: the first experiment's metric
// changed, the chain recomputed, and the MACs (which it cannot make) either
// stripped from every entry or from the forged one onwards.
void ForgeJournal(SqliteLedger* ledger, const std::string& path, bool strip_all) {
  std::vector<JournalEntry> entries;
  std::string err;
  ASSERT_TRUE(ledger->LoadJournal(&entries, &err)) << err;
  std::string prev, sql = "BEGIN;";
  bool forged = false;
  for (JournalEntry& e : entries) {
    const size_t at = e.body.find("\"metric\":1.5");
    if (e.kind == "experiment" && at != std::string::npos) {
      e.body.replace(at, 12, "\"metric\":0.1");
      forged = true;
    }
    if (strip_all || forged) e.mac.clear();
    e.hash = JournalHash(prev, e);
    prev = e.hash;
    char* quoted =
        sqlite3_mprintf("UPDATE journal SET body = %Q, hash = %Q, mac = %Q WHERE seq = %lld;",
                        e.body.c_str(), e.hash.c_str(), e.mac.c_str(), e.seq);
    sql += quoted;
    sqlite3_free(quoted);
  }
  Sql(path, sql + "UPDATE experiments SET metric = 0.1 WHERE id = 1; COMMIT;");
}

TEST_F(LedgerJournalTest, MacsStrippedAfterSignedEntriesAreAProblem) {
  ForgeJournal(ledger_.get(), path_, /*strip_all=*/false);
  LedgerCheck check = Check();
  ASSERT_EQ(check.journal_problems.size(), 1u);
  EXPECT_NE(check.journal_problems[0].find("is not authenticated by this machine's key"),
            std::string::npos)
      << check.journal_problems[0];
}

TEST_F(LedgerJournalTest, AJournalWithEveryMacStrippedIsNotTrusted) {
  ForgeJournal(ledger_.get(), path_, /*strip_all=*/true);
  LedgerCheck check = Check();
  // The chain holds, so nothing proves a forgery; but nothing proves the
  // rows either: counted, and said (ratchet audit fails on it).
  EXPECT_TRUE(check.journal_problems.empty());
  EXPECT_GT(check.foreign_entries, 0);
  EXPECT_NE(check.key_note.find("or its MACs were removed"), std::string::npos) << check.key_note;
}

TEST_F(LedgerJournalTest, AnEditedJournalEntryBreaksTheChain) {
  Sql(path_,
      "UPDATE journal SET body = replace(body, '\"metric\":1.5', '\"metric\":0.2') "
      "WHERE kind = 'experiment'");
  LedgerCheck check = Check();
  ASSERT_EQ(check.journal_problems.size(), 1u);
  EXPECT_NE(check.journal_problems[0].find("(experiment 1) was changed: its hash does not match"),
            std::string::npos)
      << check.journal_problems[0];
  Sql(path_, "DELETE FROM journal WHERE seq = 1");
  check = Check();
  ASSERT_FALSE(check.journal_problems.empty());
  EXPECT_NE(check.journal_problems[0].find("entries are missing before it"), std::string::npos);
}

TEST_F(LedgerJournalTest, WithoutTheKeyTheChainIsStillChecked) {
  ledger_.reset();
  setenv("RATCHET_KEY_FILE", (dir_ / "elsewhere").c_str(), 1);
  ASSERT_TRUE(SqliteLedger::Open(path_, false, true, &ledger_).Report(&err_)) << err_;
  LedgerCheck check = Check();
  EXPECT_TRUE(check.ok());
  EXPECT_FALSE(check.authenticated);
  EXPECT_NE(check.key_note.find("no ledger key at"), std::string::npos) << check.key_note;
}

TEST(LedgerMigration, AVersion1LedgerGainsTheJournalWithItsRowsAsFound) {
  TempDir dir;
  setenv("RATCHET_KEY_FILE", (dir / "key").c_str(), 1);
  const std::string path = dir / "ledger.db";
  Sql(path,
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES ('schema_version', '1'), ('start_commit', 'abc');"
      "CREATE TABLE sessions (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, started_at REAL "
      "NOT NULL, ended_at REAL, stop_reason TEXT);"
      "CREATE TABLE experiments (id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, phase "
      "TEXT NOT NULL, status TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '', baseline "
      "INTEGER NOT NULL DEFAULT 0, parent_commit TEXT NOT NULL DEFAULT '', candidate_commit TEXT "
      "NOT NULL DEFAULT '', proposer TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT "
      "'', hypothesis TEXT NOT NULL DEFAULT '', params TEXT NOT NULL DEFAULT '', metric REAL, "
      "metric_stddev REAL NOT NULL DEFAULT 0, metric_n INTEGER NOT NULL DEFAULT 0, metrics TEXT "
      "NOT NULL DEFAULT '{}', started_at REAL NOT NULL DEFAULT 0, finished_at REAL NOT NULL "
      "DEFAULT 0, propose_s REAL NOT NULL DEFAULT 0, build_s REAL NOT NULL DEFAULT 0, run_s REAL "
      "NOT NULL DEFAULT 0, cpu_s REAL NOT NULL DEFAULT 0, peak_rss_mb REAL NOT NULL DEFAULT 0, "
      "exit_code INTEGER NOT NULL DEFAULT -1, signal INTEGER NOT NULL DEFAULT 0, diff_stat TEXT "
      "NOT NULL DEFAULT '', files_changed TEXT NOT NULL DEFAULT '[]', log_path TEXT NOT NULL "
      "DEFAULT '', usage TEXT NOT NULL DEFAULT '{}', mechanisms TEXT NOT NULL DEFAULT '[]');"
      "INSERT INTO experiments (id, session_id, phase, status, metric) VALUES (1, 1, 'done', "
      "'keep', 2.5);"
      "CREATE TABLE runs (experiment_id INTEGER NOT NULL, attempt INTEGER NOT NULL, purpose TEXT "
      "NOT NULL, exit_code INTEGER NOT NULL, signal INTEGER NOT NULL, timed_out INTEGER NOT "
      "NULL, wall_s REAL NOT NULL, cpu_s REAL NOT NULL, peak_rss_mb REAL NOT NULL, metric REAL, "
      "metrics TEXT NOT NULL, log_path TEXT NOT NULL, PRIMARY KEY (experiment_id, attempt));"
      "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, "
      "experiment_id INTEGER NOT NULL DEFAULT 0, kind TEXT NOT NULL, detail TEXT NOT NULL);"
      "CREATE TABLE mechanism_calls (mechanism TEXT NOT NULL, hook TEXT NOT NULL, calls INTEGER "
      "NOT NULL, PRIMARY KEY (mechanism, hook));");
  std::unique_ptr<SqliteLedger> ledger;
  std::string err;
  ASSERT_TRUE(SqliteLedger::Open(path, true, false, &ledger).Report(&err)) << err;
  std::string version;
  ASSERT_TRUE(ledger->GetMeta("schema_version", &version, &err)) << err;
  EXPECT_EQ(version, "3");  // upgraded through 2 to 3
  std::vector<Experiment> rows;
  ASSERT_TRUE(ledger->LoadExperiments(&rows, &err)) << err;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0].metric, 2.5);
  LedgerCheck check;
  ASSERT_TRUE(ledger->Verify(&check, &err)) << err;
  EXPECT_TRUE(check.ok());
  EXPECT_GE(check.entries, 2);
  unsetenv("RATCHET_KEY_FILE");
}

}  // namespace
}  // namespace ratchet
