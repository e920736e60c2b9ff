// The real clock: the process's monotonic and wall clocks.
#pragma once

#include "core/clock.h"

namespace ratchet {

/// The process-wide real clock (std::chrono::steady_clock and system_clock).
/// Never null, never freed, safe to use from any thread.
Clock* SystemClock();

}  // namespace ratchet
