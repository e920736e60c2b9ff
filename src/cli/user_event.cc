#include "cli/user_event.h"

#include "exec/system_clock.h"
#include "store/sqlite_ledger.h"

namespace ratchet {

bool AddUserEvent(const LoopPaths& paths, const std::string& kind, const std::string& detail_json,
                  double* at, std::string* err) {
  if (!FileExists(paths.ledger)) {
    *err = paths.dir + " has no ledger yet: `ratchet run " + paths.dir + "` starts the loop";
    return false;
  }
  std::unique_ptr<SqliteLedger> ledger;
  if (!SqliteLedger::Open(paths.ledger, /*create=*/false, /*read_only=*/false, &ledger).Report(err))
    return false;
  std::vector<Experiment> history;
  if (!ledger->LoadExperiments(&history, err)) return false;
  LedgerEvent event;
  event.at = SystemClock()->WallSeconds();
  event.experiment_id = history.empty() ? 0 : history.back().id;
  event.kind = kind;
  event.detail_json = detail_json;
  if (!ledger->AddEvent(event, err)) return false;
  *at = event.at;
  return true;
}

bool LoadAllEvents(const LoopPaths& paths, std::vector<LedgerEvent>* events, std::string* err) {
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(err)) return false;
  return ledger->LoadEvents(0, events, err);
}

}  // namespace ratchet
