#include "store/loop_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ratchet {

Error LoopLock::Acquire(const std::string& lock_path, const std::string& loop_name) {
  Release();
  // O_CLOEXEC: experiment processes must not inherit the descriptor; a
  // leftover child holding it would keep the loop locked after ratchet died.
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error::IO("cannot open the lock " + lock_path + ": " + std::strerror(errno));
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int lock_errno = errno;
    ::close(fd);
    if (lock_errno != EWOULDBLOCK)
      return Error::IO("cannot lock " + lock_path + ": " + std::strerror(lock_errno));
    long long pid = ReadLockPid(lock_path);
    return Error::Busy("another `ratchet run` " +
                       (pid > 0 ? "(pid " + std::to_string(pid) + ") " : std::string()) +
                       "holds the loop in " + loop_name);
  }
  // Ours now: replace the previous holder's pid with ours.
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    Error e = Error::IO("cannot write the lock " + lock_path + ": " + std::strerror(errno));
    ::close(fd);
    return e;
  }
  fd_ = fd;
  return {};
}

void LoopLock::Release() {
  if (fd_ < 0) return;
  // The pid stays in the file; only the flock says who holds the loop.
  ::close(fd_);
  fd_ = -1;
}

long long ReadLockPid(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32] = {};
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  return std::strtoll(buf, nullptr, 10);
}

}  // namespace ratchet
