#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace ratchet {

void CheckFailed(const char* condition, const char* what, const char* file, int line) {
  std::fprintf(stderr, "ratchet: internal error at %s:%d: %s (%s does not hold)\n", file, line,
               what, condition);
  std::fflush(stderr);
  std::abort();
}

}  // namespace ratchet
