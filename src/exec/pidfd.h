// pidfds: a descriptor of a process that cannot come to mean another one
// when its pid is reused (Linux 5.3; -1 with ENOSYS before).
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace ratchet {

inline int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

inline bool PidfdSignal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
  return syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
#else
  (void)pidfd;
  (void)sig;
  return false;
#endif
}

}  // namespace ratchet
