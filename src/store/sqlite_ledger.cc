#include "store/sqlite_ledger.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "store/journal.h"
#include "store/json_fields.h"
#include "store/schema.h"

namespace ratchet {
namespace {

// Column order of the experiments table as bound (?1..?N) and read (0..N-1).
constexpr const char* kExperimentColumns[] = {
    "id",         "session_id",    "phase",         "status",
    "reason",     "baseline",      "parent_commit", "candidate_commit",
    "proposer",   "description",   "hypothesis",    "params",
    "metric",     "metric_stddev", "metric_n",      "metrics",
    "started_at", "finished_at",   "propose_s",     "build_s",
    "run_s",      "cpu_s",         "peak_rss_mb",   "exit_code",
    "signal",     "diff_stat",     "files_changed", "log_path",
    "usage",      "mechanisms",    "tried_commit",  "claims",
    "warnings",   "worker",
};
constexpr int kNumExperimentColumns =
    static_cast<int>(sizeof(kExperimentColumns) / sizeof(kExperimentColumns[0]));

std::string Join(const std::string& (*each)(int, std::string*), const char* sep) {
  std::string out, scratch;
  for (int i = 0; i < kNumExperimentColumns; ++i) out += (i ? sep : "") + each(i, &scratch);
  return out;
}

const std::string& ColumnName(int i, std::string* s) { return *s = kExperimentColumns[i]; }
const std::string& Placeholder(int i, std::string* s) { return *s = '?' + std::to_string(i + 1); }
const std::string& Assignment(int i, std::string* s) {
  return *s = std::string(kExperimentColumns[i]) + " = ?" + std::to_string(i + 1);
}

// Statements are cached by the address of these strings: built once.
const std::string& SelectExperimentsSql() {
  static const std::string sql =
      "SELECT " + Join(ColumnName, ", ") + " FROM experiments ORDER BY id";
  return sql;
}
const std::string& InsertExperimentSql() {
  static const std::string sql = "INSERT INTO experiments (" + Join(ColumnName, ", ") +
                                 ") VALUES (" + Join(Placeholder, ", ") + ")";
  return sql;
}
const std::string& UpdateExperimentSql() {
  static const std::string sql =
      "UPDATE experiments SET " + Join(Assignment, ", ") + " WHERE id = ?1";
  return sql;
}

double NowUnix() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

/// One use of a cached statement: binds, steps, and resets it when done.
class SqliteLedger::Query {
 public:
  Query(SqliteLedger* ledger, const char* sql, std::string* err)
      : stmt_(ledger->Statement(sql, err)) {}
  ~Query() {
    if (stmt_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  void Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, const char* s) { Bind(i, std::string(s)); }
  void Bind(int i, double v) {
    // SQLite stores NaN as NULL; keep columns declared NOT NULL writable.
    sqlite3_bind_double(stmt_, i, std::isfinite(v) ? v : 0.0);
  }
  void Bind(int i, long long v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, int v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, bool v) { sqlite3_bind_int64(stmt_, i, v ? 1 : 0); }
  void Bind(int i, const std::optional<double>& v) {
    if (v && std::isfinite(*v))
      sqlite3_bind_double(stmt_, i, *v);
    else
      sqlite3_bind_null(stmt_, i);
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }

  std::string Text(int i) {
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
             : std::string();
  }
  double Double(int i) { return sqlite3_column_double(stmt_, i); }
  long long Int(int i) { return sqlite3_column_int64(stmt_, i); }
  bool IsNull(int i) { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::optional<double> OptDouble(int i) {
    return IsNull(i) ? std::nullopt : std::optional<double>(Double(i));
  }

 private:
  sqlite3_stmt* stmt_;
};

namespace {

// The kind of a failure, from SQLite's (extended) result code.
Error::Kind KindOfSqliteCode(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Error::Kind::kCorruption;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error::Kind::kBusy;
    case SQLITE_CANTOPEN:
      return Error::Kind::kNotFound;
    default:
      return Error::Kind::kIO;
  }
}

}  // namespace

Error SqliteLedger::Open(const std::string& path, bool create, bool read_only,
                         std::unique_ptr<SqliteLedger>* ledger) {
  const bool memory = path == ":memory:";
  struct stat st;
  if (!memory && (read_only || !create) && ::stat(path.c_str(), &st) != 0)
    return Error::NotFound("no ledger at " + path +
                           " (has `ratchet run` been started on this loop?)");
  int flags =
      read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error e = Error::Of(KindOfSqliteCode(rc), "cannot open the ledger " + path + ": " +
                                                  (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<SqliteLedger> result(new SqliteLedger(path, db));
  sqlite3_extended_result_codes(db, 1);
  // A reader and the writer meet only at WAL checkpoints and at open; waiting
  // a few seconds there beats failing `ratchet status` or an engine write.
  sqlite3_busy_timeout(db, 5000);
  if (Error e = result->Initialise(create && !read_only, read_only); !e.ok()) return e;
  *ledger = std::move(result);
  return {};
}

Error SqliteLedger::SqliteError(std::string message) const {
  return Error::Of(KindOfSqliteCode(sqlite3_extended_errcode(db_)), std::move(message));
}

SqliteLedger::~SqliteLedger() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

bool SqliteLedger::Fail(const std::string& what, std::string* err) {
  *err = what + " in " + path_ + ": " + sqlite3_errmsg(db_);
  return false;
}

sqlite3_stmt* SqliteLedger::Statement(const char* sql, std::string* err) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  // PERSISTENT: these live as long as the connection and are reused for every
  // write, so the engine's several writes per experiment skip SQL parsing.
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
    Fail("cannot prepare a ledger query", err);
    return nullptr;
  }
  statements_[sql] = stmt;
  return stmt;
}

Error SqliteLedger::Initialise(bool create, bool read_only) {
  std::string err;
  migrate_from_ = kSchemaVersion;
  // Is it a database at all? The first read of the header tells.
  int tables = 0;
  {
    Query q(this, "SELECT count(*) FROM sqlite_master", &err);
    int rc = q.ok() ? q.Step() : sqlite3_errcode(db_);
    if (rc != SQLITE_ROW) {
      if ((rc & 0xff) == SQLITE_NOTADB)
        return Error::Corruption(path_ + " is not a ratchet ledger (not an SQLite database)");
      return SqliteError("cannot read the ledger in " + path_ + ": " + sqlite3_errmsg(db_));
    }
    tables = static_cast<int>(q.Int(0));
  }
  const bool fresh = tables == 0;
  if (fresh && !create)
    return Error::Corruption(path_ + " is not a ratchet ledger (it has no tables)");
  if (!fresh) {
    std::string version_text;
    {
      std::string ignored;
      Query q(this, "SELECT value FROM meta WHERE key = 'schema_version'", &ignored);
      if (q.ok() && q.Step() == SQLITE_ROW) version_text = q.Text(0);
    }
    int version = 0;
    try {
      version = std::stoi(version_text);
    } catch (...) {
      version = 0;
    }
    if (version < 1)
      return Error::Corruption(path_ +
                               " is not a ratchet ledger (no schema_version in a meta table)");
    if (version > kSchemaVersion) {
      return Error::NotSupported(path_ + " was written by a newer ratchet (ledger schema version " +
                                 std::to_string(version) + ", this ratchet reads up to " +
                                 std::to_string(kSchemaVersion) + "): upgrade ratchet");
    }
    migrate_from_ = version;
  }
  if (read_only) return {};

  // WAL: readers (status, the dashboard) never block the writer nor see a
  // half-written transaction. synchronous=NORMAL: a commit is appended to the
  // WAL with write() before it returns, so once a call returns its data is in
  // the OS page cache, which outlives the process: `kill -9` of ratchet loses
  // nothing that was acknowledged and never tears a transaction (recovery
  // replays complete WAL frames only). Only an OS crash or power loss can drop
  // the last few transactions (the WAL is fsynced at checkpoints), and even
  // then the file stays consistent. FULL would add an fsync to every write;
  // bench/store measures what that costs.
  char* msg = nullptr;
  if (sqlite3_exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr,
                   &msg) != SQLITE_OK) {
    sqlite3_free(msg);
    return SqliteError("cannot set up the ledger in " + path_ + ": " + sqlite3_errmsg(db_));
  }
  // Keep the -wal and -shm files when the writer closes: a reader opening the
  // ledger later (status, the dashboard) then finds them and creates nothing.
  int persist = 1;
  sqlite3_file_control(db_, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  if (!fresh) return FinishWriterOpen(&err) ? Error() : SqliteError(err);
  const std::string created = std::to_string(NowUnix());
  const std::string init = std::string("BEGIN IMMEDIATE;\n") + kSchemaSql +
                           "\nINSERT INTO meta (key, value) VALUES ('schema_version', '" +
                           std::to_string(kSchemaVersion) + "'), ('created_at', '" + created +
                           "');\nCOMMIT;";
  if (sqlite3_exec(db_, init.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    sqlite3_free(msg);
    Error e =
        SqliteError("cannot create the ledger tables in " + path_ + ": " + sqlite3_errmsg(db_));
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return e;
  }
  return FinishWriterOpen(&err) ? Error() : SqliteError(err);
}

bool SqliteLedger::FinishWriterOpen(std::string* err) {
  if (path_ != ":memory:" && !LoadLedgerKey(/*create=*/true, &key_, err)) return false;
  if (migrate_from_ == 1 && !MigrateFromVersion1(err)) return false;
  if (migrate_from_ == 2 && !MigrateFromVersion2(err)) return false;
  if (!LoadJournalTail(err)) return false;
  std::string recorded;
  if (!key_.id.empty() && GetMeta("key_id", &recorded, err) && recorded != key_.id)
    return SetMeta("key_id", key_.id, err);
  return true;
}

bool SqliteLedger::SetDurability(Durability durability, std::string* err) {
  const char* sql = durability == Durability::kPowerLoss ? "PRAGMA synchronous=FULL"
                                                         : "PRAGMA synchronous=NORMAL";
  return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK ||
         Fail("cannot set the ledger's durability", err);
}

namespace {

template <typename Q>
void BindExperiment(Q& q, const Experiment& e) {
  q.Bind(1, e.id);
  q.Bind(2, e.session_id);
  q.Bind(3, PhaseName(e.phase));
  q.Bind(4, StatusName(e.status));
  q.Bind(5, e.reason);
  q.Bind(6, e.baseline);
  q.Bind(7, e.parent_commit);
  q.Bind(8, e.candidate_commit);
  q.Bind(9, e.proposer);
  q.Bind(10, e.description);
  q.Bind(11, e.hypothesis);
  q.Bind(12, e.params_json);
  q.Bind(13, e.metric);
  q.Bind(14, e.metric_stddev);
  q.Bind(15, e.metric_n);
  q.Bind(16, DumpJson(MetricsJson(e.metrics)));
  q.Bind(17, e.started_at);
  q.Bind(18, e.finished_at);
  q.Bind(19, e.propose_s);
  q.Bind(20, e.build_s);
  q.Bind(21, e.run_s);
  q.Bind(22, e.cpu_s);
  q.Bind(23, e.peak_rss_mb);
  q.Bind(24, e.exit_code);
  q.Bind(25, e.signal);
  q.Bind(26, e.diff_stat);
  q.Bind(27, DumpJson(nlohmann::json(e.files_changed)));
  q.Bind(28, e.log_path);
  q.Bind(29, DumpJson(UsageJson(e.usage)));
  q.Bind(30, DumpJson(nlohmann::json(e.mechanisms)));
  q.Bind(31, e.tried_commit);
  q.Bind(32, DumpJson(MetricsJson(e.claims)));
  q.Bind(33, DumpJson(nlohmann::json(e.warnings)));
  q.Bind(34, e.worker);
}

}  // namespace

bool SqliteLedger::LoadExperiments(std::vector<Experiment>* out, std::string* err) {
  Query q(this, SelectExperimentsSql().c_str(), err);
  if (!q.ok()) return false;
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    Experiment e;
    e.id = static_cast<int>(q.Int(0));
    e.session_id = static_cast<int>(q.Int(1));
    const std::string where = "experiment " + std::to_string(e.id) + " in " + path_;
    if (!ParsePhase(q.Text(2), &e.phase) || !ParseStatus(q.Text(3), &e.status)) {
      *err = "unknown phase '" + q.Text(2) + "' or status '" + q.Text(3) + "' for " + where;
      return false;
    }
    e.reason = q.Text(4);
    e.baseline = q.Int(5) != 0;
    e.parent_commit = q.Text(6);
    e.candidate_commit = q.Text(7);
    e.proposer = q.Text(8);
    e.description = q.Text(9);
    e.hypothesis = q.Text(10);
    e.params_json = q.Text(11);
    e.metric = q.OptDouble(12);
    e.metric_stddev = q.Double(13);
    e.metric_n = static_cast<int>(q.Int(14));
    e.started_at = q.Double(16);
    e.finished_at = q.Double(17);
    e.propose_s = q.Double(18);
    e.build_s = q.Double(19);
    e.run_s = q.Double(20);
    e.cpu_s = q.Double(21);
    e.peak_rss_mb = q.Double(22);
    e.exit_code = static_cast<int>(q.Int(23));
    e.signal = static_cast<int>(q.Int(24));
    e.diff_stat = q.Text(25);
    e.log_path = q.Text(27);
    e.tried_commit = q.Text(30);
    e.worker = static_cast<int>(q.Int(33));
    if (!ParseMetricsJson(q.Text(15), &e.metrics) ||
        !ParseStringsJson(q.Text(26), &e.files_changed) || !ParseUsageJson(q.Text(28), &e.usage) ||
        !ParseStringsJson(q.Text(29), &e.mechanisms) || !ParseMetricsJson(q.Text(31), &e.claims) ||
        !ParseStringsJson(q.Text(32), &e.warnings)) {
      *err = "malformed JSON column for " + where;
      return false;
    }
    out->push_back(std::move(e));
  }
  return rc == SQLITE_DONE || Fail("cannot read experiments", err);
}

bool SqliteLedger::InsertExperiment(Experiment* exp, std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        Query next(this, "SELECT COALESCE(MAX(id), 0) + 1 FROM experiments", e);
        if (!next.ok() || next.Step() != SQLITE_ROW) return Fail("cannot number an experiment", e);
        exp->id = static_cast<int>(next.Int(0));
        return WriteExperiment(*exp, /*insert=*/true, entry, e);
      },
      err);
}

bool SqliteLedger::UpdateExperiment(const Experiment& exp, std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        return WriteExperiment(exp, /*insert=*/false, entry, e);
      },
      err);
}

bool SqliteLedger::WriteExperiment(const Experiment& exp, bool insert, JournalEntry* entry,
                                   std::string* err) {
  Query q(this, (insert ? InsertExperimentSql() : UpdateExperimentSql()).c_str(), err);
  if (!q.ok()) return false;
  BindExperiment(q, exp);
  const std::string what = std::to_string(exp.id);
  if (q.Step() != SQLITE_DONE)
    return Fail(std::string(insert ? "cannot record" : "cannot update") + " experiment " + what,
                err);
  if (sqlite3_changes(db_) != 1) {
    *err = "cannot update experiment " + what + " in " + path_ + ": no such row";
    return false;
  }
  entry->kind = "experiment";
  entry->key = what;
  entry->body = DumpJson(ExperimentJson(exp));
  return true;
}

bool SqliteLedger::AddRun(const RunRecord& r, std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        if (!WriteRun(r, /*replace=*/false, e)) return false;
        entry->kind = "run";
        entry->key = std::to_string(r.experiment_id) + "/" + std::to_string(r.attempt);
        entry->body = DumpJson(RunJson(r));
        return true;
      },
      err);
}

bool SqliteLedger::WriteRun(const RunRecord& r, bool replace, std::string* err) {
  Query q(this,
          replace ? "INSERT OR REPLACE INTO runs (experiment_id, attempt, purpose, exit_code, signal, "
          "timed_out, wall_s, cpu_s, peak_rss_mb, metric, metrics, log_path, claims, "
          "containment, sandboxed, verify_s, curve) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
          : "INSERT INTO runs (experiment_id, attempt, purpose, exit_code, signal, "
          "timed_out, wall_s, cpu_s, peak_rss_mb, metric, metrics, log_path, claims, "
          "containment, sandboxed, verify_s, curve) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
          err);
  if (!q.ok()) return false;
  q.Bind(1, r.experiment_id);
  q.Bind(2, r.attempt);
  q.Bind(3, r.purpose);
  q.Bind(4, r.exit_code);
  q.Bind(5, r.signal);
  q.Bind(6, r.timed_out);
  q.Bind(7, r.wall_s);
  q.Bind(8, r.cpu_s);
  q.Bind(9, r.peak_rss_mb);
  q.Bind(10, r.metric);
  q.Bind(11, DumpJson(MetricsJson(r.metrics)));
  q.Bind(12, r.log_path);
  q.Bind(13, DumpJson(MetricsJson(r.claims)));
  q.Bind(14, r.containment);
  q.Bind(15, r.sandboxed);
  q.Bind(16, r.verify_s);
  q.Bind(17, DumpJson(CurveJson(r.curve)));
  if (q.Step() != SQLITE_DONE)
    return Fail("cannot record run " + std::to_string(r.attempt) + " of experiment " +
                    std::to_string(r.experiment_id),
                err);
  return true;
}

bool SqliteLedger::LoadRuns(int experiment_id, std::vector<RunRecord>* out, std::string* err) {
  // A ledger of schema 2 not upgraded yet (opened read-only) has no curves.
  Query q(this,
          migrate_from_ >= 3
              ? "SELECT experiment_id, attempt, purpose, exit_code, signal, timed_out, wall_s, "
                "cpu_s, peak_rss_mb, metric, metrics, log_path, claims, containment, sandboxed, "
                "verify_s, curve FROM runs WHERE experiment_id = ?1 ORDER BY attempt"
              : "SELECT experiment_id, attempt, purpose, exit_code, signal, timed_out, wall_s, "
                "cpu_s, peak_rss_mb, metric, metrics, log_path, claims, containment, sandboxed, "
                "verify_s, '[]' FROM runs WHERE experiment_id = ?1 ORDER BY attempt",
          err);
  if (!q.ok()) return false;
  q.Bind(1, experiment_id);
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    RunRecord r;
    r.experiment_id = static_cast<int>(q.Int(0));
    r.attempt = static_cast<int>(q.Int(1));
    r.purpose = q.Text(2);
    r.exit_code = static_cast<int>(q.Int(3));
    r.signal = static_cast<int>(q.Int(4));
    r.timed_out = q.Int(5) != 0;
    r.wall_s = q.Double(6);
    r.cpu_s = q.Double(7);
    r.peak_rss_mb = q.Double(8);
    r.metric = q.OptDouble(9);
    r.log_path = q.Text(11);
    r.containment = q.Text(13);
    r.sandboxed = q.Int(14) != 0;
    r.verify_s = q.Double(15);
    if (!ParseMetricsJson(q.Text(10), &r.metrics) || !ParseMetricsJson(q.Text(12), &r.claims) ||
        !ParseCurveJson(q.Text(16), &r.curve)) {
      *err = "malformed metrics of run " + std::to_string(r.attempt) + " of experiment " +
             std::to_string(r.experiment_id) + " in " + path_;
      return false;
    }
    out->push_back(std::move(r));
  }
  return rc == SQLITE_DONE || Fail("cannot read runs", err);
}

bool SqliteLedger::AddEvent(const LedgerEvent& event, std::string* err) {
  Query q(this, "INSERT INTO events (at, experiment_id, kind, detail) VALUES (?1, ?2, ?3, ?4)",
          err);
  if (!q.ok()) return false;
  q.Bind(1, event.at);
  q.Bind(2, event.experiment_id);
  q.Bind(3, event.kind);
  q.Bind(4, event.detail_json.empty() ? std::string("{}") : event.detail_json);
  return q.Step() == SQLITE_DONE || Fail("cannot record a " + event.kind + " event", err);
}

bool SqliteLedger::LoadEvents(long long after_seq, std::vector<LedgerEvent>* out,
                              std::string* err) {
  Query q(this,
          "SELECT seq, at, experiment_id, kind, detail FROM events WHERE seq > ?1 ORDER BY seq",
          err);
  if (!q.ok()) return false;
  q.Bind(1, after_seq);
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    LedgerEvent e;
    e.seq = q.Int(0);
    e.at = q.Double(1);
    e.experiment_id = static_cast<int>(q.Int(2));
    e.kind = q.Text(3);
    e.detail_json = q.Text(4);
    out->push_back(std::move(e));
  }
  return rc == SQLITE_DONE || Fail("cannot read events", err);
}

bool SqliteLedger::BeginSession(const Session& session, int* id, std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        Query q(this, "INSERT INTO sessions (pid, started_at) VALUES (?1, ?2)", e);
        if (!q.ok()) return false;
        q.Bind(1, session.pid);
        q.Bind(2, session.started_at);
        if (q.Step() != SQLITE_DONE) return Fail("cannot record the session", e);
        Session s = session;
        s.id = *id = static_cast<int>(sqlite3_last_insert_rowid(db_));
        s.ended_at = 0;
        s.stop_reason.clear();
        entry->kind = "session";
        entry->key = std::to_string(s.id);
        entry->body = DumpJson(SessionJson(s));
        return true;
      },
      err);
}

bool SqliteLedger::EndSession(int id, double ended_at, const std::string& reason,
                              std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        Query q(this, "UPDATE sessions SET ended_at = ?2, stop_reason = ?3 WHERE id = ?1", e);
        if (!q.ok()) return false;
        q.Bind(1, id);
        q.Bind(2, ended_at);
        q.Bind(3, reason);
        if (q.Step() != SQLITE_DONE) return Fail("cannot end session " + std::to_string(id), e);
        if (sqlite3_changes(db_) != 1) {
          *e = "no session " + std::to_string(id) + " in " + path_;
          return false;
        }
        Session s;
        if (!ReadSession(id, &s, e)) return false;
        entry->kind = "session";
        entry->key = std::to_string(id);
        entry->body = DumpJson(SessionJson(s));
        return true;
      },
      err);
}

Session SqliteLedger::SessionRow(Query& q) {
  Session s;
  s.id = static_cast<int>(q.Int(0));
  s.pid = q.Int(1);
  s.started_at = q.Double(2);
  s.ended_at = q.Double(3);  // NULL reads as 0: still running, or died
  s.stop_reason = q.Text(4);
  return s;
}

bool SqliteLedger::ReadSession(int id, Session* s, std::string* err) {
  Query q(this, "SELECT id, pid, started_at, ended_at, stop_reason FROM sessions WHERE id = ?1",
          err);
  if (!q.ok()) return false;
  q.Bind(1, id);
  if (q.Step() != SQLITE_ROW) return Fail("cannot read session " + std::to_string(id), err);
  *s = SessionRow(q);
  return true;
}

bool SqliteLedger::LoadSessions(std::vector<Session>* out, std::string* err) {
  Query q(this, "SELECT id, pid, started_at, ended_at, stop_reason FROM sessions ORDER BY id", err);
  if (!q.ok()) return false;
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out->push_back(SessionRow(q));
  return rc == SQLITE_DONE || Fail("cannot read sessions", err);
}

bool SqliteLedger::SetMeta(const std::string& key, const std::string& value, std::string* err) {
  return Journaled(
      [&](JournalEntry* entry, std::string* e) {
        if (!WriteMeta(key, value, e)) return false;
        entry->kind = "meta";
        entry->key = key;
        entry->body = DumpJson(nlohmann::json{{"value", value}});
        return true;
      },
      err);
}

bool SqliteLedger::WriteMeta(const std::string& key, const std::string& value, std::string* err) {
  Query q(this,
          "INSERT INTO meta (key, value) VALUES (?1, ?2) "
          "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
          err);
  if (!q.ok()) return false;
  q.Bind(1, key);
  q.Bind(2, value);
  return q.Step() == SQLITE_DONE || Fail("cannot record " + key, err);
}

bool SqliteLedger::GetMeta(const std::string& key, std::string* value, std::string* err) {
  Query q(this, "SELECT value FROM meta WHERE key = ?1", err);
  if (!q.ok()) return false;
  q.Bind(1, key);
  value->clear();
  int rc = q.Step();
  if (rc == SQLITE_ROW) *value = q.Text(0);
  return rc == SQLITE_ROW || rc == SQLITE_DONE || Fail("cannot read " + key, err);
}

bool SqliteLedger::AddMechanismCalls(const std::string& mechanism, const std::string& hook,
                                     long long calls, std::string* err) {
  Query q(this,
          "INSERT INTO mechanism_calls (mechanism, hook, calls) VALUES (?1, ?2, ?3) "
          "ON CONFLICT(mechanism, hook) DO UPDATE SET calls = calls + excluded.calls",
          err);
  if (!q.ok()) return false;
  q.Bind(1, mechanism);
  q.Bind(2, hook);
  q.Bind(3, calls);
  return q.Step() == SQLITE_DONE || Fail("cannot count calls of " + mechanism, err);
}

bool SqliteLedger::LoadMechanismCalls(std::map<std::pair<std::string, std::string>, long long>* out,
                                      std::string* err) {
  Query q(this, "SELECT mechanism, hook, calls FROM mechanism_calls", err);
  if (!q.ok()) return false;
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) (*out)[{q.Text(0), q.Text(1)}] = q.Int(2);
  return rc == SQLITE_DONE || Fail("cannot read mechanism calls", err);
}

// The journal.

bool SqliteLedger::Journaled(const std::function<bool(JournalEntry*, std::string*)>& write,
                             std::string* err) {
  if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
    return Fail("cannot begin a ledger write", err);
  JournalEntry entry;
  bool ok = write(&entry, err) && AppendJournal(&entry, err);
  if (ok && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    ok = Fail("cannot commit a ledger write", err);
  if (!ok) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  }
  last_seq_ = entry.seq;
  last_hash_ = entry.hash;
  return true;
}

bool SqliteLedger::AppendJournal(JournalEntry* entry, std::string* err) {
  entry->seq = last_seq_ + 1;
  entry->at = NowUnix();
  entry->hash = JournalHash(last_hash_, *entry);
  entry->mac = key_.bytes.empty() ? "" : key_.id + ":" + JournalMac(key_.bytes, entry->hash);
  Query q(this,
          "INSERT INTO journal (seq, at, kind, key, body, hash, mac) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
          err);
  if (!q.ok()) return false;
  q.Bind(1, entry->seq);
  q.Bind(2, entry->at);
  q.Bind(3, entry->kind);
  q.Bind(4, entry->key);
  q.Bind(5, entry->body);
  q.Bind(6, entry->hash);
  q.Bind(7, entry->mac);
  return q.Step() == SQLITE_DONE || Fail("cannot append to the journal", err);
}

bool SqliteLedger::LoadJournalTail(std::string* err) {
  Query q(this, "SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1", err);
  if (!q.ok()) return false;
  int rc = q.Step();
  if (rc == SQLITE_ROW) {
    last_seq_ = q.Int(0);
    last_hash_ = q.Text(1);
  } else if (rc != SQLITE_DONE) {
    return Fail("cannot read the journal", err);
  }
  return true;
}

bool SqliteLedger::MigrateFromVersion1(std::string* err) {
  const char* sql =
      "BEGIN IMMEDIATE;"
      "ALTER TABLE experiments ADD COLUMN tried_commit TEXT NOT NULL DEFAULT '';"
      "ALTER TABLE experiments ADD COLUMN claims TEXT NOT NULL DEFAULT '{}';"
      "ALTER TABLE experiments ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';"
      "ALTER TABLE experiments ADD COLUMN worker INTEGER NOT NULL DEFAULT 0;"
      "ALTER TABLE runs ADD COLUMN claims TEXT NOT NULL DEFAULT '{}';"
      "ALTER TABLE runs ADD COLUMN containment TEXT NOT NULL DEFAULT '';"
      "ALTER TABLE runs ADD COLUMN sandboxed INTEGER NOT NULL DEFAULT 0;"
      "ALTER TABLE runs ADD COLUMN verify_s REAL NOT NULL DEFAULT 0;"
      "CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, at REAL NOT NULL, "
      "kind TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, hash TEXT NOT NULL, "
      "mac TEXT NOT NULL);"
      "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
      "COMMIT;";
  // Version 2 to 3 follows in FinishWriterOpen.
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    Fail("cannot upgrade the ledger to schema version 2", err);
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  }
  // The rows as found are the journal's start: trusted on first use.
  std::map<std::pair<std::string, std::string>, std::string> rows;
  if (!CurrentRows(&rows, err)) return false;
  for (const auto& row : rows) {
    if (!Journaled(
            [&](JournalEntry* entry, std::string*) {
              entry->kind = row.first.first;
              entry->key = row.first.second;
              entry->body = row.second;
              return true;
            },
            err))
      return false;
  }
  migrate_from_ = 2;
  return true;
}

bool SqliteLedger::MigrateFromVersion2(std::string* err) {
  // Learning curves. A run's journal body has "curve" only when it has one,
  // so the rows of version 2 still read as journaled.
  const char* sql =
      "BEGIN IMMEDIATE;"
      "ALTER TABLE runs ADD COLUMN curve TEXT NOT NULL DEFAULT '[]';"
      "UPDATE meta SET value = '3' WHERE key = 'schema_version';"
      "COMMIT;";
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    Fail("cannot upgrade the ledger to schema version 3", err);
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return false;
  }
  migrate_from_ = kSchemaVersion;
  return true;
}

bool SqliteLedger::LoadJournal(std::vector<JournalEntry>* out, std::string* err) {
  Query q(this, "SELECT seq, at, kind, key, body, hash, mac FROM journal ORDER BY seq", err);
  if (!q.ok()) return false;
  out->clear();
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    JournalEntry e;
    e.seq = q.Int(0);
    e.at = q.Double(1);
    e.kind = q.Text(2);
    e.key = q.Text(3);
    e.body = q.Text(4);
    e.hash = q.Text(5);
    e.mac = q.Text(6);
    out->push_back(std::move(e));
  }
  return rc == SQLITE_DONE || Fail("cannot read the journal", err);
}

bool SqliteLedger::Replay(LedgerCheck* check,
                          std::map<std::pair<std::string, std::string>, std::string>* last,
                          std::string* err) {
  std::vector<JournalEntry> entries;
  if (!LoadJournal(&entries, err)) return false;
  LedgerKey key = key_;
  if (key.bytes.empty() && path_ != ":memory:" && !LoadLedgerKey(false, &key, err)) return false;
  check->entries = static_cast<long long>(entries.size());
  check->authenticated = !key.bytes.empty();
  check->key_note = key.note;
  std::string prev;
  long long foreign = 0;
  bool ours_seen = false;
  for (const JournalEntry& e : entries) {
    const std::string where = "journal entry " + std::to_string(e.seq) + " (" + e.kind + " " +
                              e.key + ")";
    if (e.seq != static_cast<long long>(&e - &entries[0]) + 1) {
      check->journal_problems.push_back(where + ": entries are missing before it");
      break;
    }
    if (JournalHash(prev, e) != e.hash) {
      check->journal_problems.push_back(where + " was changed: its hash does not match");
      break;
    }
    if (!key.bytes.empty()) {
      const std::string want = key.id + ":" + JournalMac(key.bytes, e.hash);
      if (e.mac.rfind(key.id + ":", 0) == 0) {
        if (e.mac != want) {
          check->journal_problems.push_back(where +
                                            " was rewritten: its MAC does not match the key");
          break;
        }
        ours_seen = true;
      } else if (ours_seen) {
        // Once this machine's ratchet wrote the journal, every later entry
        // is its own: one without its MAC was written by something else.
        check->journal_problems.push_back(where + " is not authenticated by this machine's key");
        break;
      } else {
        ++foreign;  // written on another machine (another key) or without one
      }
    }
    prev = e.hash;
    (*last)[{e.kind, e.key}] = e.body;
  }
  check->foreign_entries = foreign;
  if (foreign > 0)
    check->key_note = std::to_string(foreign) +
                      " journal entries are not authenticated by this machine's key: the "
                      "ledger came from elsewhere (RATCHET_KEY_FILE names its key), or its MACs "
                      "were removed";
  return true;
}

bool SqliteLedger::CurrentRows(std::map<std::pair<std::string, std::string>, std::string>* rows,
                               std::string* err) {
  rows->clear();
  std::vector<Experiment> experiments;
  if (!LoadExperiments(&experiments, err)) return false;
  for (const Experiment& e : experiments) {
    (*rows)[{"experiment", std::to_string(e.id)}] = DumpJson(ExperimentJson(e));
    std::vector<RunRecord> runs;
    if (!LoadRuns(e.id, &runs, err)) return false;
    for (const RunRecord& r : runs)
      (*rows)[{"run", std::to_string(r.experiment_id) + "/" + std::to_string(r.attempt)}] =
          DumpJson(RunJson(r));
  }
  {
    // Runs of experiments that have no row (a hand-made or orphaned run).
    Query q(this,
            "SELECT DISTINCT experiment_id FROM runs WHERE experiment_id NOT IN "
            "(SELECT id FROM experiments)",
            err);
    if (!q.ok()) return false;
    std::vector<int> orphans;
    while (q.Step() == SQLITE_ROW) orphans.push_back(static_cast<int>(q.Int(0)));
    for (int id : orphans) {
      std::vector<RunRecord> runs;
      if (!LoadRuns(id, &runs, err)) return false;
      for (const RunRecord& r : runs)
        (*rows)[{"run", std::to_string(id) + "/" + std::to_string(r.attempt)}] =
            DumpJson(RunJson(r));
    }
  }
  std::vector<Session> sessions;
  if (!LoadSessions(&sessions, err)) return false;
  for (const Session& s : sessions)
    (*rows)[{"session", std::to_string(s.id)}] = DumpJson(SessionJson(s));
  Query q(this,
          "SELECT key, value FROM meta WHERE key NOT IN ('schema_version', 'created_at')", err);
  if (!q.ok()) return false;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW)
    (*rows)[{"meta", q.Text(0)}] = DumpJson(nlohmann::json{{"value", q.Text(1)}});
  return rc == SQLITE_DONE || Fail("cannot read meta", err);
}

namespace {

// "experiment 7: status keep (the journal says discard), metric 0.001 (...)".
std::string Difference(const std::string& kind, const std::string& key, const std::string& row,
                       const std::string& written) {
  const std::string what = kind + " " + key;
  if (written.empty()) return what + " has no journal entry: it was added outside ratchet";
  if (row.empty()) return what + " is missing: it was deleted outside ratchet";
  nlohmann::json a = nlohmann::json::parse(row, nullptr, false);
  nlohmann::json b = nlohmann::json::parse(written, nullptr, false);
  std::string fields;
  if (a.is_object() && b.is_object()) {
    for (const auto& [name, value] : b.items()) {
      auto it = a.find(name);
      if (it != a.end() && *it == value) continue;
      if (!fields.empty()) fields += ", ";
      fields += name + " " + (it == a.end() ? std::string("missing") : DumpJson(*it)) +
                " (ratchet wrote " + DumpJson(value) + ")";
    }
  }
  return what + " was changed outside ratchet: " + (fields.empty() ? "its row differs" : fields);
}

}  // namespace

bool SqliteLedger::Verify(LedgerCheck* check, std::string* err) {
  *check = LedgerCheck();
  std::map<std::pair<std::string, std::string>, std::string> last, rows;
  if (!Replay(check, &last, err)) return false;
  if (!check->journal_problems.empty()) return true;
  if (!CurrentRows(&rows, err)) return false;
  for (const auto& [id, body] : rows) {
    auto it = last.find(id);
    const std::string written = it == last.end() ? "" : it->second;
    if (written != body) check->row_problems.push_back(Difference(id.first, id.second, body, written));
  }
  for (const auto& [id, body] : last)
    if (!rows.count(id)) check->row_problems.push_back(Difference(id.first, id.second, "", body));
  return true;
}

bool SqliteLedger::Repair(std::vector<std::string>* repaired, std::string* err) {
  repaired->clear();
  LedgerCheck check;
  std::map<std::pair<std::string, std::string>, std::string> last, rows;
  if (!Replay(&check, &last, err)) return false;
  if (!check.journal_problems.empty()) {
    *err = "cannot repair " + path_ + ": " + check.journal_problems.front();
    return false;
  }
  if (!CurrentRows(&rows, err)) return false;
  if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
    return Fail("cannot begin a repair", err);
  bool ok = true;
  auto put_back = [&](const std::pair<std::string, std::string>& id, const std::string& body) {
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    JournalEntry ignored;
    if (id.first == "experiment") {
      Experiment e;
      if (!ExperimentFromJson(j, &e)) return false;
      Query del(this, "DELETE FROM experiments WHERE id = ?1", err);
      del.Bind(1, e.id);
      return del.Step() == SQLITE_DONE && WriteExperiment(e, true, &ignored, err);
    }
    if (id.first == "run") {
      RunRecord r;
      return RunFromJson(j, &r) && WriteRun(r, /*replace=*/true, err);
    }
    if (id.first == "session") {
      Session s;
      if (!SessionFromJson(j, &s)) return false;
      Query q(this,
              "INSERT OR REPLACE INTO sessions (id, pid, started_at, ended_at, stop_reason) "
              "VALUES (?1, ?2, ?3, ?4, ?5)",
              err);
      q.Bind(1, s.id);
      q.Bind(2, s.pid);
      q.Bind(3, s.started_at);
      if (s.ended_at > 0) q.Bind(4, s.ended_at);
      if (!s.stop_reason.empty() || s.ended_at > 0) q.Bind(5, s.stop_reason);
      return q.Step() == SQLITE_DONE;
    }
    return j.is_object() && j.contains("value") && j["value"].is_string() &&
           WriteMeta(id.second, j["value"].get<std::string>(), err);
  };
  auto remove = [&](const std::pair<std::string, std::string>& id) {
    const char* sql = id.first == "experiment" ? "DELETE FROM experiments WHERE id = ?1"
                      : id.first == "session"  ? "DELETE FROM sessions WHERE id = ?1"
                      : id.first == "meta"     ? "DELETE FROM meta WHERE key = ?1"
                                               : "DELETE FROM runs WHERE experiment_id || '/' || attempt = ?1";
    Query q(this, sql, err);
    q.Bind(1, id.second);
    return q.Step() == SQLITE_DONE;
  };
  for (const auto& [id, body] : rows) {
    auto it = last.find(id);
    if (it != last.end() && it->second == body) continue;
    ok = it == last.end() ? remove(id) : put_back(id, it->second);
    if (!ok) break;
    repaired->push_back(id.first + " " + id.second);
  }
  for (const auto& [id, body] : last) {
    if (!ok || rows.count(id)) continue;
    ok = put_back(id, body);
    if (ok) repaired->push_back(id.first + " " + id.second);
  }
  if (ok && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    ok = Fail("cannot commit a repair", err);
  if (!ok) {
    if (err->empty()) *err = "cannot put a row of " + path_ + " back from its journal";
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  return ok;
}

}  // namespace ratchet
