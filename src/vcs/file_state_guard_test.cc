// The guard against real files: a real git directory layout, and a real
// SQLite ledger in WAL mode held open by "ratchet" while another process
// (the sqlite3 shell, standing in for an agent) writes to it.
#include "vcs/file_state_guard.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/ledger_files.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
}

uint64_t Inode(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

int Shell(const std::string& command) { return std::system(command.c_str()); }

class GuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ratchet-guard-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root = tmpl;
    Write(root / ".git/HEAD", "ref: refs/heads/ratchet/main\n");
    Write(root / ".git/config", "[core]\n\tbare = false\n");
    Write(root / ".git/refs/heads/ratchet/main", "1111111111111111111111111111111111111111\n");
    Write(root / ".git/objects/ab/cdef", "object");
    Write(root / ".git/index", "index");
    Write(root / ".ratchet/notes.md", "- #1 keep: baseline\n");
    Write(root / ".ratchet/runs/1/run.log", "val_bpb: 1.0\n");
    Write(root / ".ratchet/runs/2/prompt.md", "prompt");
  }
  void TearDown() override {
    if (db) sqlite3_close(db);
    fs::remove_all(root);
  }

  // "ratchet": a ledger in WAL mode, open for the whole test.
  void OpenLedger() {
    ASSERT_EQ(sqlite3_open((root / ".ratchet/ledger.db").c_str(), &db), SQLITE_OK);
    Exec(
        "PRAGMA journal_mode=WAL; CREATE TABLE experiments(id INTEGER PRIMARY KEY, metric REAL);"
        "INSERT INTO experiments VALUES (1, 0.99), (2, 0.98);");
  }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
  }
  std::string Query(sqlite3* conn, const std::string& sql) {
    std::string out;
    sqlite3_exec(
        conn, sql.c_str(),
        [](void* arg, int n, char** values, char**) {
          for (int i = 0; i < n; ++i)
            *static_cast<std::string*>(arg) += std::string(values[i] ? values[i] : "NULL") + ";";
          return 0;
        },
        &out, nullptr);
    return out;
  }
  // A fresh connection, as `ratchet status` would open one later.
  std::string QueryFresh(const std::string& sql) {
    sqlite3* other = nullptr;
    EXPECT_EQ(sqlite3_open((root / ".ratchet/ledger.db").c_str(), &other), SQLITE_OK);
    std::string out = Query(other, sql);
    sqlite3_close(other);
    return out;
  }
  std::string Sqlite3(const std::string& sql) {
    return "sqlite3 " + (root / ".ratchet/ledger.db").string() + " \"" + sql + "\"";
  }

  fs::path root;
  sqlite3* db = nullptr;
  LedgerFiles ledger_files;
};

TEST_F(GuardTest, NothingChangedIsClean) {
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  // What git and ratchet write on their own is not the agent's doing.
  Write(root / ".git/index", "index refreshed by git status");
  Write(root / ".git/objects/12/3456", "new object");
  Write(root / ".git/modules/sub/objects/ab/cd", "a submodule's object");
  Write(root / ".git/lfs/objects/aa/bb", "a large file");
  Write(root / ".git/ORIG_HEAD", "x");
  Write(root / ".ratchet/live.json", "{}");
  GuardReport report = guard.CheckAndRestore();
  EXPECT_TRUE(report.clean()) << report.Describe();
  EXPECT_FALSE(fs::exists(root / ".ratchet/guard"));
}

TEST_F(GuardTest, GitMetadataIsPutBackAndNewFilesRemoved) {
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {".ratchet/runs/2/agent.log"}, &err)) << err;
  Write(root / ".git/refs/heads/ratchet/main", "2222222222222222222222222222222222222222\n");
  Write(root / ".git/HEAD", "ref: refs/heads/elsewhere\n");
  fs::remove(root / ".git/config");
  Write(root / ".git/refs/heads/sneaky", "3333\n");
  Write(root / ".git/index.lock", "");
  Write(root / ".ratchet/notes.md", "- #1 keep: I was the best ever\n");
  Write(root / ".ratchet/runs/2/agent.log", "the agent's own output");
  GuardReport report = guard.CheckAndRestore();
  EXPECT_FALSE(report.fatal);
  EXPECT_TRUE(report.not_restored.empty()) << report.Describe();
  EXPECT_EQ(report.changed.size(), 6u) << report.Describe();
  EXPECT_EQ(Read(root / ".git/refs/heads/ratchet/main"),
            "1111111111111111111111111111111111111111\n");
  EXPECT_EQ(Read(root / ".git/HEAD"), "ref: refs/heads/ratchet/main\n");
  EXPECT_EQ(Read(root / ".git/config"), "[core]\n\tbare = false\n");
  EXPECT_FALSE(fs::exists(root / ".git/refs/heads/sneaky"));
  EXPECT_FALSE(fs::exists(root / ".git/index.lock"));
  EXPECT_EQ(Read(root / ".ratchet/notes.md"), "- #1 keep: baseline\n");
  EXPECT_EQ(Read(root / ".ratchet/runs/2/agent.log"), "the agent's own output");
  EXPECT_NE(report.Describe().find("(put back)"), std::string::npos) << report.Describe();
}

TEST_F(GuardTest, ChangedRunLogsAreReportedNotUndone) {
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  Write(root / ".ratchet/runs/1/run.log", "val_bpb: 0.1\n");
  GuardReport report = guard.CheckAndRestore();
  ASSERT_EQ(report.changed, std::vector<std::string>{".ratchet/runs/1/run.log"});
  EXPECT_EQ(report.not_restored, report.changed);
  EXPECT_FALSE(report.fatal);
  EXPECT_NE(report.Describe().find("could not be undone"), std::string::npos);
}

TEST_F(GuardTest, LedgerWrittenByAnotherProcessIsRestoredUnderTheOpenConnection) {
  OpenLedger();
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  const std::string db_bytes = Read(root / ".ratchet/ledger.db");
  ASSERT_EQ(Shell(Sqlite3("UPDATE experiments SET metric = 0.01 WHERE id = 1; "
                          "INSERT INTO experiments VALUES (3, 0.5);")),
            0);
  ASSERT_EQ(QueryFresh("SELECT metric FROM experiments WHERE id = 1"), "0.01;");

  GuardReport report = guard.CheckAndRestore();
  EXPECT_FALSE(report.fatal) << report.Describe();
  EXPECT_NE(std::find(report.changed.begin(), report.changed.end(), ".ratchet/ledger.db-wal"),
            report.changed.end())
      << report.Describe();
  EXPECT_TRUE(report.not_restored.empty()) << report.Describe();
  // ratchet's own connection, still open, sees the true history and goes on.
  EXPECT_EQ(Query(db, "SELECT id, metric FROM experiments ORDER BY id"), "1;0.99;2;0.98;");
  Exec("INSERT INTO experiments VALUES (3, 0.97);");
  EXPECT_EQ(QueryFresh("SELECT id, metric FROM experiments ORDER BY id"), "1;0.99;2;0.98;3;0.97;");
  EXPECT_EQ(QueryFresh("PRAGMA integrity_check"), "ok;");
  (void)db_bytes;
}

// Closing any descriptor of a file drops the process's record locks on it,
// SQLite's included; the guard must leave ratchet's connection locked, or the
// next process to close the ledger takes it for the last one, checkpoints
// and deletes its log behind ratchet's back.
TEST_F(GuardTest, RatchetsSqliteLocksSurviveTheGuard) {
  OpenLedger();
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  ASSERT_EQ(Shell(Sqlite3("UPDATE experiments SET metric = 0.5 WHERE id = 2")), 0);
  GuardReport report = guard.CheckAndRestore();
  ASSERT_FALSE(report.clean());
  ASSERT_EQ(Shell(Sqlite3("SELECT count(*) FROM experiments") + " >/dev/null"), 0);
  EXPECT_TRUE(fs::exists(root / ".ratchet/ledger.db-wal"))
      << "another process found the ledger unlocked and removed its log";
  EXPECT_EQ(Query(db, "SELECT metric FROM experiments WHERE id = 2"), "0.98;");
}

TEST_F(GuardTest, DeletedOrReplacedLedgerIsTheSameFileAgain) {
  OpenLedger();
  const uint64_t inode = Inode(root / ".ratchet/ledger.db");
  for (const char* how : {"rm -f", "replace"}) {
    SCOPED_TRACE(how);
    FileStateGuard guard(&ledger_files);
    std::string err;
    ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
    fs::path ledger = root / ".ratchet/ledger.db";
    if (std::string(how) == "rm -f") {
      fs::remove(ledger);
    } else {
      Write(root / "forged.db", "not a database");
      fs::rename(root / "forged.db", ledger);
    }
    GuardReport report = guard.CheckAndRestore();
    EXPECT_FALSE(report.fatal) << report.Describe();
    EXPECT_EQ(Inode(ledger), inode);  // the file ratchet's connection writes to
    Exec("INSERT INTO experiments (metric) VALUES (0.5);");
    EXPECT_EQ(QueryFresh("SELECT count(*) FROM experiments"),
              std::string(how) == "rm -f" ? "3;" : "4;");
    EXPECT_EQ(QueryFresh("PRAGMA integrity_check"), "ok;");
  }
}

TEST_F(GuardTest, WipingRatchetStateIsFatal) {
  OpenLedger();
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  ASSERT_TRUE(fs::exists(root / ".ratchet/guard/ledger.db"));  // the aside link
  fs::remove_all(root / ".ratchet");
  GuardReport report = guard.CheckAndRestore();
  EXPECT_TRUE(report.fatal);
  EXPECT_NE(report.detail.find("ratchet cannot go on writing to it"), std::string::npos)
      << report.detail;
  // What could be written back is: the notes, and the ledger's last bytes.
  EXPECT_EQ(Read(root / ".ratchet/notes.md"), "- #1 keep: baseline\n");
  EXPECT_TRUE(fs::exists(root / ".ratchet/ledger.db"));
}

TEST_F(GuardTest, StaleAsideLinksFromACrashAreCleared) {
  Write(root / ".ratchet/guard/ledger.db", "stale");
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  EXPECT_FALSE(fs::exists(root / ".ratchet/guard/ledger.db"));
  EXPECT_TRUE(guard.CheckAndRestore().clean());
}

TEST_F(GuardTest, MissingFoldersAreNothingToGuard) {
  fs::remove_all(root / ".git");
  fs::remove_all(root / ".ratchet");
  FileStateGuard guard(&ledger_files);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  EXPECT_TRUE(guard.CheckAndRestore().clean());
}

// Told of no held files, the guard treats the ledger as any other file: its
// bytes are put back by a replacement file.
TEST_F(GuardTest, WithoutHeldFilesTheLedgerIsAnOrdinaryFile) {
  Write(root / ".ratchet/ledger.db", "ledger bytes");
  const uint64_t inode = Inode(root / ".ratchet/ledger.db");
  FileStateGuard guard(nullptr);
  std::string err;
  ASSERT_TRUE(guard.Capture(root, {}, &err)) << err;
  EXPECT_FALSE(fs::exists(root / ".ratchet/guard"));  // nothing linked aside
  Write(root / ".ratchet/ledger.db", "forged");
  GuardReport report = guard.CheckAndRestore();
  EXPECT_EQ(report.Describe(), "changed .ratchet/ledger.db (put back)");
  EXPECT_EQ(Read(root / ".ratchet/ledger.db"), "ledger bytes");
  EXPECT_NE(Inode(root / ".ratchet/ledger.db"), inode);
}

}  // namespace
}  // namespace ratchet
