// One `ratchet run` per loop directory: an exclusive flock(2) on
// .ratchet/lock. The kernel drops the lock when the holder's file is closed,
// which includes any death, SIGKILL too, so a crashed run never leaves a
// stale lock behind. The holder's pid is written into the file for messages.
#pragma once

#include <string>

#include "base/error.h"

namespace ratchet {

class LoopLock {
 public:
  LoopLock() = default;
  ~LoopLock() { Release(); }
  LoopLock(const LoopLock&) = delete;
  LoopLock& operator=(const LoopLock&) = delete;

  /// Takes the lock at `lock_path` (creating the file; its folder must exist)
  /// without waiting. When another process holds it, fails with kBusy and
  /// "another `ratchet run` (pid N) holds the loop in <loop_name>"; any other
  /// failure is kIO.
  Error Acquire(const std::string& lock_path, const std::string& loop_name);
  /// Gives the lock up (also done by the destructor and by process death).
  void Release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// The pid written in the lock file at `lock_path`, 0 if none can be read.
/// Says nothing about whether that process still holds the lock.
long long ReadLockPid(const std::string& lock_path);

}  // namespace ratchet
