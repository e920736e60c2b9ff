// Starting the supervisor process (supervisor.h) and reaping it.
//
// The obvious way, fork(), copies ratchet's page tables and makes every page
// copy-on-write, for a process that only runs a few system calls: on this
// project's VMs that costs more than starting the command itself (about 3 ms
// of CPU for a tiny process), and it grows with ratchet's memory. So, as
// posix_spawn does for its child, the supervisor shares ratchet's memory
// (clone with CLONE_VM) and runs on a stack of its own. It touches only that
// stack and the plan, and errno: errno lives in the calling thread's TLS,
// which the supervisor inherits, so the clone is made from a short-lived
// "donor" thread that does nothing else and lives until the supervisor is
// reaped; the runner's own thread, whose errno matters, is never shared.
// With sanitizers (which intercept the supervisor's calls) or if any of this
// fails, it falls back to fork().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>

#include "exec/supervisor.h"
#include "exec/unique_fd.h"

namespace ratchet {

class SupervisorProcess {
 public:
  SupervisorProcess() = default;
  SupervisorProcess(const SupervisorProcess&) = delete;
  SupervisorProcess& operator=(const SupervisorProcess&) = delete;
  /// Reaps the supervisor if Reap() was not called: it must be finishing (the
  /// caller closed its control pipe), since this waits for it.
  ~SupervisorProcess();

  /// Starts SupervisorMain(*plan), which must stay valid until Reap();
  /// share_memory false: with fork().
  bool Start(const SupervisorPlan* plan, bool share_memory, std::string* err);
  pid_t pid() const { return pid_; }
  /// Waits for the supervisor to exit (it writes its last record first).
  void Reap();
  /// True when the supervisor shares ratchet's memory (no fork).
  bool shares_memory() const { return stack_ != nullptr; }
  /// False in sanitizer builds, which always fork.
  static bool CanShareMemory();

 private:
  bool StartSharingMemory(const SupervisorPlan* plan);
  void ReleaseDonor();

  pid_t pid_ = -1;
  bool reaped_ = false;
  void* stack_ = nullptr;
  size_t stack_size_ = 0;
  std::thread donor_;
  std::atomic<pid_t> cloned_{0};
  UniqueFd release_r_, release_w_;
};

}  // namespace ratchet
