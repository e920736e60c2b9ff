// Finding a process's descendants through /proc.
//
// Used in two places: by the run supervisor (supervisor.h), which runs in a
// clone or fork of a multithreaded program and so may only make system calls,
// and by the runner to sample the memory of a run's process tree. Hence the
// plain-C shape: no allocation, no locks, no stdio.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace ratchet {

enum class ProcWalk {
  kAuto,      // children files when the kernel has them, else a scan of /proc
  kScanProc,  // always scan every /proc/<pid>/stat for parent links (the fallback)
};

/// Writes the descendants of `root` (not root itself) to out[0..cap), parents
/// before their children, and returns how many it stored. When there were
/// more than cap, sets *truncated (if given); the rest were not visited.
/// A snapshot: processes forked or reaped meanwhile may be missed, so callers
/// that must find everything repeat until nothing is left. Zombies are listed.
/// Async-signal-safe. Returns 0 when root is gone or /proc is unreadable.
int ListDescendants(pid_t root, pid_t* out, int cap, bool* truncated = nullptr,
                    ProcWalk walk = ProcWalk::kAuto);

/// The parent of `pid` (from /proc/<pid>/stat); -1 when it is gone.
/// Async-signal-safe.
pid_t ParentOf(pid_t pid);

/// Resident memory of one process, from /proc/<pid>/status, in KiB.
struct ProcMemory {
  uint64_t rss_kb = 0;  // VmRSS: now
  uint64_t hwm_kb = 0;  // VmHWM: the peak of this process so far
};
/// False when the process is gone (or is a zombie, which has no memory).
bool ReadProcMemory(pid_t pid, ProcMemory* mem);

}  // namespace ratchet
