// The run supervisor: a small process between ratchet and the command it runs,
// which makes sure no process of the run outlives it.
//
// Why a process of its own. A process that escapes its group (setsid, setpgid,
// a double fork) is no longer reachable by killing the group, and when its
// parent dies it is re-parented to the nearest ancestor marked "child
// subreaper" (PR_SET_CHILD_SUBREAPER), else to init. Marking ratchet itself as
// the subreaper would catch such orphans, but it is a property of the whole
// process: orphans of every thread's runs (an agent proposer and a watchdog may
// run at the same time) and of any library's children would all land in
// ratchet, with nothing to tell whose they are, and nobody could reap them with
// waitpid(-1) without stealing other threads' children. So each run gets its
// own subreaper: ratchet starts a supervisor, which marks itself
// subreaper and starts the command. Every process the run creates then stays
// inside the supervisor's subtree whatever it does, and "the processes of the
// run" is exactly "the descendants of the supervisor", found through /proc
// (proc_tree.h). The supervisor reaps everything (waitpid(-1) is safe there:
// all its children are the run's), and when the command's first process (the
// leader) exits it kills and reaps whatever is left, then reports and exits.
// Where the machine allows, each run also has a cgroup (cgroup.h), which the
// command joins before it execs: then ratchet kills the run through the
// kernel (cgroup.kill) and the supervisor is only the reaper; it remains the
// containment where there is no cgroup and no sandbox pid namespace.
//
// The supervisor is ratchet's code without an exec (there is no helper binary
// to find), running in a clone that shares ratchet's memory or in a fork of a
// multithreaded process (supervisor_process.h): either way it may only make
// system calls, and only touch its own stack. Everything it needs is
// prepared beforehand in a SupervisorPlan.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace ratchet {

/// At most this many extra descriptors (RunSpec::fds, the sandbox's status
/// pipe) and cgroup.procs files per run.
inline constexpr int kMaxPlanFds = 32;
inline constexpr int kMaxCgroupFds = 4;

struct SupervisorPlan {
  const char* path = nullptr;  // the program to execve (already looked up in PATH)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;  // null: unchanged
  int stdin_fd = -1;          // becomes fd 0 of the command
  int output_fd = -1;         // becomes fds 1 and 2 of the command
  int status_fd = -1;         // supervisor -> ratchet: SupervisorMessage records
  int control_fd = -1;        // ratchet -> supervisor: control bytes below; EOF kills the run
  /// Extra descriptors: fd_from[i] (open in ratchet) becomes fd_to[i] in the
  /// command; a target of 0 or 1 (or 2) replaces stdin or stdout (stderr).
  int fd_from[kMaxPlanFds] = {};
  int fd_to[kMaxPlanFds] = {};
  int n_fds = 0;
  /// cgroup.procs files the command writes "0" to, before anything else, so
  /// that it is in the step's cgroups before it can fork (cgroup.h).
  int cgroup_procs[kMaxCgroupFds] = {};
  int n_cgroup_procs = 0;
  /// The cgroup2 folder of the step, whose cgroup.procs is cgroup_procs[0]:
  /// where the kernel can, the command is born in it (clone3 with
  /// CLONE_INTO_CGROUP, x86-64) and that first write is skipped. -1: none.
  int cgroup_dir = -1;
  /// RLIMIT_FSIZE of the command; 0: unchanged.
  uint64_t file_size_limit = 0;
  /// The command is bubblewrap with a pid namespace: its first two levels
  /// (bwrap and the namespace's init) are not sent SIGTERM, which would end
  /// the namespace at once; they die with the command, or by SIGKILL.
  bool sandbox_layers = false;
  /// Signals ratchet ignores (bit n-1 for signal n): they would stay ignored
  /// across execve, so the command resets them. All ones: reset every signal.
  uint64_t ignored_signals = ~0ull;
};

/// Control bytes ratchet writes to control_fd.
inline constexpr char kControlTerminate = 'T';  // SIGTERM to every process of the run
inline constexpr char kControlInterrupt = 'I';  // SIGINT to every process of the run
inline constexpr char kControlKill = 'K';       // SIGKILL to every process, then finish

/// What the supervisor writes to status_fd: first kStarted, then kDone just
/// before it exits. Each record is one write() of less than PIPE_BUF bytes, so
/// it arrives whole.
struct SupervisorMessage {
  enum Kind : int32_t { kStarted = 1, kDone = 2 };
  enum Stage : int32_t {
    kNoError = 0,
    kStageSpawn,
    kStageChdir,
    kStageExec,
    kStageCgroup,  // joining the step's cgroup
    kStageFds,     // dup2 of the descriptors
    kStageLimit,   // setrlimit
  };
  int32_t kind = 0;
  int32_t leader_pid = 0;     // kStarted
  int32_t error_stage = 0;    // kStarted: where starting the command failed
  int32_t error_errno = 0;    // kStarted
  int32_t leader_status = 0;  // kDone: waitpid status of the leader
  int32_t leader_reaped = 0;  // kDone: 1 if leader_status is valid
  int64_t user_us = 0;        // kDone: CPU time of every reaped descendant
  int64_t sys_us = 0;
  int64_t maxrss_kb = 0;  // kDone: the largest single descendant's peak RSS
};

/// Runs in the child of fork(): starts the command and supervises it as
/// described above, then _exits. Async-signal-safe throughout.
[[noreturn]] void SupervisorMain(const SupervisorPlan& plan);

}  // namespace ratchet
