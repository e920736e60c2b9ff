// steering: how the user steers a running loop from outside it. `ratchet
// note DIR TEXT` adds guidance that every later proposal sees; `ratchet
// pause DIR` / `ratchet resume DIR` hold the loop: no new experiment starts
// while it is paused (those in flight go on). `ratchet rerun DIR ID` asks
// for an earlier experiment's change to run again in full (no pruning, no
// preflight) on the current incumbent, as the next experiment. The engine
// asks this port
// before it starts an experiment and before each proposal; the real
// implementation reads the ledger's "note" / "pause" / "resume" events
// (src/notify/ledger_steering.h), so the engine itself does not change.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ratchet {

struct RerunRequest {
  long long seq = 0;      // the request's ledger event
  int experiment_id = 0;  // the experiment whose change runs again
};

class Steering {
 public:
  virtual ~Steering() = default;
  /// Guidance lines from the user for the next proposal, oldest first, e.g.
  /// "note from the user (2026-12-03 14:05 UTC): try a wider MLP".
  virtual std::vector<std::string> Guidance() = 0;
  /// Whether the user paused the loop, now. Never waits. `note` tells the
  /// user once when a pause begins and once when it ends.
  virtual bool Paused(const std::function<void(const std::string&)>& note) = 0;
  /// The oldest request for a rerun not served yet, marked served (in the
  /// ledger, so that a later session does not serve it again); false when
  /// there is none. A request taken just before a crash is not served.
  virtual bool TakeRerun(RerunRequest* request) {
    (void)request;
    return false;
  }
};

}  // namespace ratchet
