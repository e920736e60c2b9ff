// The real Ledger (core/ledger.h): SQLite at .ratchet/ledger.db, schema in
// schema.sql (compiled in). One writer (`ratchet run`, holding the loop lock)
// and any number of readers (`ratchet status`, `log`, the dashboard) at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "core/ledger.h"
#include "store/journal.h"
#include "store/ledger_key.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ratchet {

class SqliteLedger : public Ledger {
 public:
  /// Opens the ledger at `path` (":memory:" for a throwaway one).
  /// - create: make the file and its tables if missing (writers only).
  /// - read_only: never creates or modifies the file; every write fails.
  /// Fails with a message naming `path`, and its kind: kNotFound when it is
  /// missing (and !create); kCorruption when it is not a ratchet ledger or
  /// SQLite finds it damaged; kNotSupported when a newer ratchet wrote it;
  /// kBusy when another connection kept it locked; kIO otherwise.
  static Error Open(const std::string& path, bool create, bool read_only,
                    std::unique_ptr<SqliteLedger>* ledger);
  ~SqliteLedger() override;
  SqliteLedger(const SqliteLedger&) = delete;
  SqliteLedger& operator=(const SqliteLedger&) = delete;

  const std::string& path() const { return path_; }

  /// What an acknowledged write survives. kProcessCrash (the default,
  /// synchronous=NORMAL): any death of ratchet, kill -9 included. kPowerLoss
  /// (synchronous=FULL): also an OS crash or power cut, at one fsync per write.
  enum class Durability { kProcessCrash, kPowerLoss };
  bool SetDurability(Durability durability, std::string* err);

  bool LoadExperiments(std::vector<Experiment>* out, std::string* err) override;
  bool InsertExperiment(Experiment* exp, std::string* err) override;
  bool UpdateExperiment(const Experiment& exp, std::string* err) override;
  bool AddRun(const RunRecord& run, std::string* err) override;
  bool LoadRuns(int experiment_id, std::vector<RunRecord>* out, std::string* err) override;
  bool AddEvent(const LedgerEvent& event, std::string* err) override;
  bool LoadEvents(long long after_seq, std::vector<LedgerEvent>* out, std::string* err) override;
  bool BeginSession(const Session& session, int* id, std::string* err) override;
  bool EndSession(int id, double ended_at, const std::string& reason, std::string* err) override;
  bool LoadSessions(std::vector<Session>* out, std::string* err) override;
  bool SetMeta(const std::string& key, const std::string& value, std::string* err) override;
  bool GetMeta(const std::string& key, std::string* value, std::string* err) override;
  bool AddMechanismCalls(const std::string& mechanism, const std::string& hook, long long calls,
                         std::string* err) override;
  bool LoadMechanismCalls(std::map<std::pair<std::string, std::string>, long long>* out,
                          std::string* err) override;
  /// A reader checks MACs with the key of ledger_key.h when it is there; a
  /// writer made the key when it first opened the ledger.
  bool Verify(LedgerCheck* check, std::string* err) override;
  bool Repair(std::vector<std::string>* repaired, std::string* err) override;

  /// Every journal entry, oldest first (for `ratchet audit`).
  bool LoadJournal(std::vector<JournalEntry>* out, std::string* err);
  /// The key this writer authenticates with (empty bytes: none, see note).
  const LedgerKey& key() const { return key_; }

 private:
  class Query;
  /// The session in the current row of a query of id, pid, started_at,
  /// ended_at, stop_reason (in that order) from sessions.
  static Session SessionRow(Query& q);
  SqliteLedger(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  /// Checks (and for a writer, creates) the schema; see Open.
  Error Initialise(bool create, bool read_only);
  /// `message`, of the kind SQLite's last error on this connection says.
  Error SqliteError(std::string message) const;
  /// The cached statement for `sql` (prepared once per connection).
  sqlite3_stmt* Statement(const char* sql, std::string* err);
  /// "<what> in <path>: <sqlite message>", returns false.
  bool Fail(const std::string& what, std::string* err);

  /// Runs `write` (which fills the entry's kind, key and body) and appends its
  /// journal entry in one transaction.
  bool Journaled(const std::function<bool(JournalEntry*, std::string*)>& write,
                 std::string* err);
  bool AppendJournal(JournalEntry* entry, std::string* err);
  /// A writer's last steps of Open: the key, a migration, the journal's tail.
  bool FinishWriterOpen(std::string* err);
  bool LoadJournalTail(std::string* err);
  /// Version 1 ledgers: the new columns, the journal, every row journaled.
  bool MigrateFromVersion1(std::string* err);
  bool MigrateFromVersion2(std::string* err);
  bool WriteExperiment(const Experiment& exp, bool insert, JournalEntry* entry, std::string* err);
  bool WriteRun(const RunRecord& run, bool replace, std::string* err);
  bool WriteMeta(const std::string& key, const std::string& value, std::string* err);
  bool ReadSession(int id, Session* session, std::string* err);
  /// The journal's last body per (kind, key); the chain and MACs checked.
  bool Replay(LedgerCheck* check, std::map<std::pair<std::string, std::string>, std::string>* last,
              std::string* err);
  /// The current rows as the journal writes them, by (kind, key).
  bool CurrentRows(std::map<std::pair<std::string, std::string>, std::string>* rows,
                   std::string* err);

  std::string path_;
  sqlite3* db_;
  LedgerKey key_;
  int migrate_from_ = 0;  // the schema version found at open
  long long last_seq_ = 0;
  std::string last_hash_;
  std::unordered_map<const char*, sqlite3_stmt*> statements_;  // keyed by SQL literal
};

}  // namespace ratchet
