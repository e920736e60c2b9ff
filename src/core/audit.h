// `ratchet audit`: what an auditor checks without trusting the loop's own
// log. The ledger's journal holds (hash chain and MACs, every row as ratchet
// wrote it); every commit that was tried is still reachable; every kept
// commit has the protected files the loop began with; and every keep is
// scored again on the audit split (RATCHET_VERIFY_SPLIT=audit) by the
// trusted verifier, from a fresh build of its commit and the model its run
// saved, to show keeps that only fit the validation split.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/config.h"
#include "core/ledger.h"
#include "core/repo.h"
#include "core/runner.h"
#include "core/workspace.h"

namespace ratchet {

struct AuditedKeep {
  int id = 0;
  int parent_id = 0;  // the keep it improved on (0 for the baseline)
  std::string commit;
  std::optional<double> val;    // the metric the loop recorded
  std::optional<double> audit;  // re-scored on the audit split
  bool protected_ok = true;     // its protected files are the loop's
  bool worse_than_parent = false;
  std::string problem;  // why it could not be re-scored, or what is wrong
};

struct AuditReport {
  LedgerCheck ledger;
  int tried_commits = 0;
  std::vector<std::string> missing_commits;  // "#7 abc1234 (refs/ratchet/tried/7)"
  std::vector<AuditedKeep> keeps;
  bool rescored = false;  // false when the loop has no [verify] or --no-rescore
  std::string rescore_note;
  bool ok() const;
  /// The report as JSON (one object).
  std::string Json(const std::string& metric_name) const;
};

struct AuditDeps {
  Ledger* ledger = nullptr;
  Repo* repo = nullptr;
  Workspace* workspace = nullptr;  // the loop directory
  StepRunner* steps = nullptr;
  Clock* clock = nullptr;
  bool sandbox = false;  // run the build and the model server sandboxed
  std::string home;
};

/// Runs the whole audit. False only when it could not be done at all (the
/// ledger cannot be read); everything found is in the report.
bool RunAudit(const LoopConfig& config, const AuditDeps& deps, bool rescore, AuditReport* report,
              std::string* err);

}  // namespace ratchet
