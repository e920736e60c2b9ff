// The clock port. Policy code never reads the time itself, so tests can move
// time forward without sleeping.
#pragma once

namespace ratchet {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Seconds on a monotonic clock (for durations and deadlines).
  virtual double MonotonicSeconds() = 0;
  /// Unix time in seconds (for the record).
  virtual double WallSeconds() = 0;
};

}  // namespace ratchet
