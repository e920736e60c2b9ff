// The ledger port: the loop's durable state. The real implementation is
// SQLite (src/store/sqlite_ledger.h, schema in src/store/schema.sql); policy
// tests use an in-memory fake. Every call is durable when it returns true:
// the engine writes each transition before the side effect that follows it.
//
// Every write of an experiment, a run, a session or a meta value is also
// appended to a journal whose entries are hash-chained and authenticated
// with a key kept outside the loop directory, so a change made to the ledger
// by anything but ratchet is detected (Verify) and the rows can be put back
// from what ratchet itself wrote (Repair).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/experiment.h"

namespace ratchet {

/// A fact the loop records besides experiment rows: an outer-loop decision,
/// a gate result, a stop. `detail_json` is a JSON object.
struct LedgerEvent {
  long long seq = 0;  // assigned by the ledger
  double at = 0;      // unix seconds
  int experiment_id = 0;  // 0 when not about one experiment
  std::string kind;   // e.g. "session_start", "stop", "outer", "mechanism", "gate"
  std::string detail_json;
};

/// What Verify found. `journal_problems`: the chain or a MAC does not hold
/// (the journal itself was changed: nothing in it can be trusted from there
/// on). `row_problems`: a table row differs from the journal's last entry for
/// it, or has none (the rows were changed: Repair puts them back).
struct LedgerCheck {
  long long entries = 0;
  bool authenticated = false;  // MACs were checked (the key is here)
  std::string key_note;        // why not, when not
  /// Entries (all before the first one this machine's key signed) under
  /// another key or none: a ledger from elsewhere, or MACs stripped.
  long long foreign_entries = 0;
  std::vector<std::string> journal_problems;
  std::vector<std::string> row_problems;
  bool ok() const { return journal_problems.empty() && row_problems.empty(); }
};

struct Session {
  int id = 0;
  long long pid = 0;
  double started_at = 0;
  double ended_at = 0;        // 0 while running (or if it died)
  std::string stop_reason;    // "" while running (or if it died)
};

class Ledger {
 public:
  virtual ~Ledger() = default;

  /// All experiments, ordered by id.
  virtual bool LoadExperiments(std::vector<Experiment>* out, std::string* err) = 0;
  /// Inserts a new row with the next id (max + 1), written into exp->id.
  virtual bool InsertExperiment(Experiment* exp, std::string* err) = 0;
  /// Rewrites the row with exp.id (every column).
  virtual bool UpdateExperiment(const Experiment& exp, std::string* err) = 0;

  virtual bool AddRun(const RunRecord& run, std::string* err) = 0;
  virtual bool LoadRuns(int experiment_id, std::vector<RunRecord>* out, std::string* err) = 0;

  virtual bool AddEvent(const LedgerEvent& event, std::string* err) = 0;
  /// Events with seq > after_seq, oldest first.
  virtual bool LoadEvents(long long after_seq, std::vector<LedgerEvent>* out,
                          std::string* err) = 0;

  virtual bool BeginSession(const Session& session, int* id, std::string* err) = 0;
  virtual bool EndSession(int id, double ended_at, const std::string& reason,
                          std::string* err) = 0;
  virtual bool LoadSessions(std::vector<Session>* out, std::string* err) = 0;

  /// Small key/value facts about the loop (metric name, protected hashes...).
  virtual bool SetMeta(const std::string& key, const std::string& value, std::string* err) = 0;
  /// *value is "" when the key is absent.
  virtual bool GetMeta(const std::string& key, std::string* value, std::string* err) = 0;

  /// Adds `calls` to the count of (mechanism, hook).
  virtual bool AddMechanismCalls(const std::string& mechanism, const std::string& hook,
                                 long long calls, std::string* err) = 0;
  virtual bool LoadMechanismCalls(
      std::map<std::pair<std::string, std::string>, long long>* out, std::string* err) = 0;

  /// Checks the journal's chain and MACs and every row against it.
  virtual bool Verify(LedgerCheck* check, std::string* err) = 0;
  /// Rewrites every row that differs from the journal's last entry for it
  /// (only when the journal itself holds). *repaired names what was put back.
  virtual bool Repair(std::vector<std::string>* repaired, std::string* err) = 0;
};

}  // namespace ratchet
