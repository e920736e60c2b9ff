// steering: how the user steers a running loop from outside it. `ratchet
// note DIR TEXT` adds guidance that every later proposal sees; `ratchet
// pause DIR` / `ratchet resume DIR` hold the loop between experiments. The
// engine asks this port before each experiment and each proposal; the real
// implementation reads the ledger's "note" / "pause" / "resume" events
// (src/notify/ledger_steering.h), so the engine itself does not change.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ratchet {

class Steering {
 public:
  virtual ~Steering() = default;
  /// Guidance lines from the user for the next proposal, oldest first, e.g.
  /// "note from the user (2026-12-03 14:05 UTC): try a wider MLP".
  virtual std::vector<std::string> Guidance() = 0;
  /// Called between experiments. Returns false at once unless the user
  /// paused the loop; then waits (a bounded poll) until it is resumed or
  /// `stop()` is true, and returns true. `note` tells the user why the loop
  /// waits, once per pause.
  virtual bool WaitWhilePaused(const std::function<bool()>& stop,
                               const std::function<void(const std::string&)>& note) = 0;
};

}  // namespace ratchet
