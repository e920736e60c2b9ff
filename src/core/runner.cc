#include "core/runner.h"

#include <cstdio>
#include <cstring>

namespace ratchet {

std::string RunResult::Describe() const {
  char buf[256];
  switch (end) {
    case End::kExited:
      std::snprintf(buf, sizeof buf, "exit %d", exit_code);
      return buf;
    case End::kSignaled:
      std::snprintf(buf, sizeof buf, "signal %d (%s)", signal, strsignal(signal));
      return buf;
    case End::kTimedOut:
      std::snprintf(buf, sizeof buf, "timed out after %.1fs", wall_s);
      return buf;
    case End::kCancelled:
      return "cancelled";
    case End::kFailedToStart:
      return "failed to start: " + error;
    case End::kLimit:
      switch (limit) {
        case Limit::kMemory: return "memory limit exceeded";
        case Limit::kPids: return "process limit exceeded";
        case Limit::kFileSize: return "file size limit exceeded";
        case Limit::kNone: break;
      }
      return "limit exceeded";
  }
  return "?";
}

}  // namespace ratchet
