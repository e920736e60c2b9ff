// The ledger port: the loop's durable state. The real implementation is
// SQLite (src/store/sqlite_ledger.h, schema in src/store/schema.sql); policy
// tests use an in-memory fake. Every call is durable when it returns true:
// the engine writes each transition before the side effect that follows it.
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
  /// Inserts a new row; exp.id must be the next id (max + 1).
  virtual bool InsertExperiment(const Experiment& exp, std::string* err) = 0;
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
};

}  // namespace ratchet
