// Writing to a pipe whose reader is gone raises SIGPIPE, which would kill
// ratchet. The runner blocks it in its own thread while it works (and
// swallows one that became pending) rather than change the process-wide
// disposition.
#pragma once

#include <signal.h>
#include <time.h>

namespace ratchet {

class ScopedBlockSigpipe {
 public:
  ScopedBlockSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old);
    was_blocked_ = sigismember(&old, SIGPIPE);
  }
  ~ScopedBlockSigpipe() {
    if (was_blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE)) {
      struct timespec zero = {0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_UNBLOCK, &pipe_, nullptr);
  }
  ScopedBlockSigpipe(const ScopedBlockSigpipe&) = delete;
  ScopedBlockSigpipe& operator=(const ScopedBlockSigpipe&) = delete;

 private:
  sigset_t pipe_;
  bool was_blocked_ = false;
};

}  // namespace ratchet
