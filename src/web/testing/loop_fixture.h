// A recorded loop for tests and benchmarks of the dashboard: ratchet.toml,
// run logs, an optional real git history of candidates, and experiments
// written through the Ledger port (the real SQLite ledger in make_loop).
#pragma once

#include <cstdint>
#include <string>

#include "core/ledger.h"

namespace ratchet {

struct FixtureOptions {
  int experiments = 30;  // including the baseline (id 1)
  bool git = true;       // commit every candidate in a real git repository
  bool logs = true;      // write .ratchet/runs/<id>/run.log
  uint64_t seed = 1;
  double target = 0.9;  // [stop] target in ratchet.toml
};

struct FixtureSummary {
  int experiments = 0;
  int kept = 0;           // status keep, the baseline included
  int failed = 0;         // without a chart value (crash, timeout)
  std::string incumbent;  // the branch head (git) or ""
};

/// Creates the loop in `dir` (which must exist) and records its experiments
/// in `ledger`. Deterministic for a given seed.
bool WriteLoopFixture(const std::string& dir, Ledger* ledger, const FixtureOptions& options,
                      FixtureSummary* summary, std::string* err);

/// Records one more experiment, decided as `keep` (with a commit when the
/// loop has git), as `ratchet run` would: inserted, then updated to done.
bool AppendFixtureExperiment(const std::string& dir, Ledger* ledger, const std::string& description,
                             double metric, FixtureSummary* summary, std::string* err);

/// Writes .ratchet/live.json (atomically) saying that experiment `id` of
/// process `pid` is in `phase`, its run started `elapsed_s` ago.
bool WriteFixtureLive(const std::string& dir, long long pid, int id, const std::string& phase,
                      double elapsed_s, const std::string& progress, std::string* err);

}  // namespace ratchet
