#include "exec/system_clock.h"

#include <chrono>

namespace ratchet {
namespace {

class RealClock final : public Clock {
 public:
  double MonotonicSeconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double WallSeconds() override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* SystemClock() {
  static RealClock* clock = new RealClock();  // never destroyed: usable during exit
  return clock;
}

}  // namespace ratchet
