#include "exec/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "exec/proc_tree.h"

namespace ratchet {
namespace {

// How many processes one pass of the kill loop signals; the loop repeats
// until the subtree is empty, so a larger tree only takes more passes.
constexpr int kMaxPids = 4096;

void WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // ratchet is gone; nothing to tell
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// The supervisor must not hold other runs' pipes (a concurrent run would then
// never see EOF on its stdin), so every inherited descriptor it does not need
// is closed first. keep[] is sorted.
void CloseAllExcept(const int* keep, int n) {
  unsigned lo = 3;
  for (int i = 0; i <= n; ++i) {
    unsigned hi = i < n ? static_cast<unsigned>(keep[i]) : ~0u;
    if (hi > lo) {
      if (close_range(lo, hi - 1, 0) != 0) {
        // Kernels before 5.9: close one by one up to a sane bound.
        unsigned last = hi - 1 < 65535u ? hi - 1 : 65535u;
        for (unsigned fd = lo; fd <= last; ++fd) close(static_cast<int>(fd));
      }
    }
    if (i < n) lo = static_cast<unsigned>(keep[i]) + 1;
  }
}

// Gives the command its descriptors: stdin, the output pipe on 1 and 2, and
// the extra ones, each at its target number. Every source is first copied
// above all targets, so that no dup2 can overwrite a source still needed
// (fd 4 -> 3 and 3 -> 4, say); the copies and the originals are then closed
// (or close at exec), leaving exactly the targets open.
bool WireDescriptors(const SupervisorPlan& p) {
  int from[kMaxPlanFds + 3], to[kMaxPlanFds + 3];
  int n = 0;
  bool taken[3] = {false, false, false};
  for (int i = 0; i < p.n_fds; ++i)
    if (p.fd_to[i] >= 0 && p.fd_to[i] < 3) taken[p.fd_to[i]] = true;
  if (!taken[0]) from[n] = p.stdin_fd, to[n++] = 0;
  if (!taken[1]) from[n] = p.output_fd, to[n++] = 1;
  if (!taken[2]) from[n] = p.output_fd, to[n++] = 2;
  for (int i = 0; i < p.n_fds; ++i) from[n] = p.fd_from[i], to[n++] = p.fd_to[i];
  int above = 3;
  for (int i = 0; i < n; ++i)
    if (to[i] >= above) above = to[i] + 1;
  int copy[kMaxPlanFds + 3];
  for (int i = 0; i < n; ++i) {
    copy[i] = fcntl(from[i], F_DUPFD_CLOEXEC, above);
    if (copy[i] < 0) return false;
  }
  // The originals may lack O_CLOEXEC (the caller's descriptors).
  close(p.stdin_fd);
  close(p.output_fd);
  for (int i = 0; i < p.n_fds; ++i) close(p.fd_from[i]);
  for (int i = 0; i < n; ++i) {
    if (dup2(copy[i], to[i]) < 0) return false;
  }
  return true;
}

// The leader's side of the spawn, in a child that shares the supervisor's
// memory and stack space until it execs (vfork or clone3 with CLONE_VFORK):
// only system calls, and the two error words the parent reads afterwards.
struct LeaderArgs {
  const SupervisorPlan* plan;
  volatile int32_t* stage;
  volatile int32_t* err;
  bool in_cgroup;  // born in the cgroup2 cgroup (CLONE_INTO_CGROUP): no write needed
};

[[noreturn]] void LeaderMain(const LeaderArgs& a) {
  const SupervisorPlan& p = *a.plan;
  auto fail = [&](int32_t at) {
    *a.err = errno;
    *a.stage = at;
    _exit(127);
  };
  // Into the step's cgroups first: from here on, everything the command
  // starts is counted, limited and killed with it.
  for (int i = a.in_cgroup ? 1 : 0; i < p.n_cgroup_procs; ++i) {
    ssize_t w = write(p.cgroup_procs[i], "0", 1);
    if (w != 1) fail(SupervisorMessage::kStageCgroup);
  }
  // Own process group, so the run's processes can be signalled together and
  // a terminal's Ctrl-C reaches ratchet only (ratchet decides what to stop).
  setpgid(0, 0);
  // Handlers are reset by execve, but ignored signals stay ignored: undo
  // what ratchet ignored (SIGPIPE, say), then unblock. Only those: a system
  // call per signal is a measurable part of starting a short command.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG && sig <= 64; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP && (p.ignored_signals >> (sig - 1) & 1)) {
      sigaction(sig, &dfl, nullptr);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (p.file_size_limit > 0) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0) fail(SupervisorMessage::kStageLimit);
    rlim_t want = static_cast<rlim_t>(p.file_size_limit);
    if (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max) rl.rlim_max = want;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) fail(SupervisorMessage::kStageLimit);
  }
  if (!WireDescriptors(p)) fail(SupervisorMessage::kStageFds);
  if (p.cwd && chdir(p.cwd) != 0) fail(SupervisorMessage::kStageChdir);
  // If the supervisor is killed outright, take the leader with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  execve(p.path, p.argv, p.envp);
  fail(SupervisorMessage::kStageExec);
  _exit(127);  // not reached
}

#if defined(__x86_64__)
// clone3 with CLONE_INTO_CGROUP puts the leader in its cgroup at birth.
// Writing cgroup.procs instead moves it, which takes the kernel's
// threadgroup lock for writing and so waits for an RCU grace period: 10-20
// ms on a busy machine, for every step. clone3 has no glibc wrapper here,
// and a child on a stack of its own needs the few instructions below
// (glibc's clone() does the same for clone).
struct CloneArgs {  // struct clone_args of <linux/sched.h>, Linux 5.7
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};
constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;
constexpr long kSysClone3 = 435;

int LeaderEntry(void* a) { LeaderMain(*static_cast<const LeaderArgs*>(a)); }

// Returns the child's pid, or -errno; the child runs fn(arg) on args->stack
// and exits with its result (LeaderMain never returns).
long Clone3Run(CloneArgs* args, int (*fn)(void*), void* arg) {
  register long rax asm("rax") = kSysClone3;
  register CloneArgs* rdi asm("rdi") = args;
  register long rsi asm("rsi") = sizeof(CloneArgs);
  register int (*r12)(void*) asm("r12") = fn;
  register void* r13 asm("r13") = arg;
  asm volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      // The child: the kernel set rsp to the top of its stack.
      "xor %%ebp, %%ebp\n\t"
      "mov %%r13, %%rdi\n\t"
      "call *%%r12\n\t"
      "mov %%eax, %%edi\n\t"
      "mov $60, %%eax\n\t"  // exit
      "syscall\n\t"
      "hlt\n\t"
      "1:\n\t"
      : "+r"(rax)
      : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13)
      : "rcx", "r11", "memory", "cc");
  return rax;
}
#endif

// vfork: fork would copy the page tables of ratchet's address space (which
// the supervisor shares or copies); vfork borrows them until the execve.
// Where the kernel can, clone3 (above) does the same, into the cgroup.
pid_t SpawnLeader(const SupervisorPlan& p, volatile int32_t* stage, volatile int32_t* err,
                  char* stack, size_t stack_size) {
#if defined(__x86_64__)
  if (p.cgroup_dir >= 0) {
    LeaderArgs a{&p, stage, err, true};
    CloneArgs args = {};
    args.flags = CLONE_VM | CLONE_VFORK | kCloneIntoCgroup;
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<uint64_t>(stack);
    args.stack_size = stack_size;
    args.cgroup = static_cast<uint64_t>(p.cgroup_dir);
    long pid = Clone3Run(&args, LeaderEntry, &a);
    if (pid > 0) return static_cast<pid_t>(pid);
    // ENOSYS (before Linux 5.3, or a seccomp filter), E2BIG or EINVAL
    // (before 5.7): the leader joins by writing cgroup.procs.
  }
#else
  (void)stack;
  (void)stack_size;
#endif
  pid_t pid = vfork();
  if (pid != 0) return pid;
  LeaderMain(LeaderArgs{&p, stage, err, false});
}

class Supervisor {
 public:
  explicit Supervisor(const SupervisorPlan& plan) : plan_(plan) {}

  [[noreturn]] void Main() {
    int keep[5 + kMaxPlanFds + kMaxCgroupFds];
    int n_keep = 0;
    keep[n_keep++] = plan_.stdin_fd;
    keep[n_keep++] = plan_.output_fd;
    keep[n_keep++] = plan_.status_fd;
    keep[n_keep++] = plan_.control_fd;
    for (int i = 0; i < plan_.n_fds; ++i) keep[n_keep++] = plan_.fd_from[i];
    for (int i = 0; i < plan_.n_cgroup_procs; ++i) keep[n_keep++] = plan_.cgroup_procs[i];
    if (plan_.cgroup_dir >= 0) keep[n_keep++] = plan_.cgroup_dir;
    // A few dozen elements: insertion sort.
    for (int i = 1; i < n_keep; ++i)
      for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
        int t = keep[j];
        keep[j] = keep[j - 1];
        keep[j - 1] = t;
      }
    CloseAllExcept(keep, n_keep);
    prctl(PR_SET_NAME, "ratchet-run");
    // Block every signal: the supervisor must outlive what it supervises,
    // whatever is sent to ratchet's process group (Ctrl-C, SIGTERM, SIGPIPE).
    // Children are noticed through a signalfd; commands come on control_fd.
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    // If ratchet ignores SIGCHLD (or set SA_NOCLDWAIT), the kernel would reap
    // our children itself and waitpid could not report the leader's status.
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, nullptr);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sfd_ = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);

    volatile int32_t stage = SupervisorMessage::kNoError, err = 0;
    // The leader's stack until it execs, when it is born by clone3.
    alignas(16) char leader_stack[16 << 10];
    leader_ = SpawnLeader(plan_, &stage, &err, leader_stack, sizeof leader_stack);
    if (leader_ < 0) {
      stage = SupervisorMessage::kStageSpawn;
      err = errno;
    }
    // Only the run may hold its pipes open.
    close(plan_.stdin_fd);
    close(plan_.output_fd);
    for (int i = 0; i < plan_.n_fds; ++i) close(plan_.fd_from[i]);
    for (int i = 0; i < plan_.n_cgroup_procs; ++i) close(plan_.cgroup_procs[i]);
    if (plan_.cgroup_dir >= 0) close(plan_.cgroup_dir);
    SupervisorMessage started;
    started.kind = SupervisorMessage::kStarted;
    started.leader_pid = leader_;
    started.error_stage = stage;
    started.error_errno = err;
    WriteAll(plan_.status_fd, &started, sizeof started);

    if (leader_ > 0) WaitForLeader();
    KillEverything();

    SupervisorMessage done;
    done.kind = SupervisorMessage::kDone;
    done.leader_status = leader_status_;
    done.leader_reaped = leader_reaped_ ? 1 : 0;
    struct rusage ru = {};
    getrusage(RUSAGE_CHILDREN, &ru);
    done.user_us = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
    done.sys_us = ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
    done.maxrss_kb = ru.ru_maxrss;
    WriteAll(plan_.status_fd, &done, sizeof done);
    _exit(0);
  }

 private:
  // Phase 1: until the leader exits, reap what dies and obey ratchet.
  void WaitForLeader() {
    while (!leader_reaped_) {
      struct pollfd fds[2] = {{sfd_, POLLIN, 0}, {plan_.control_fd, POLLIN, 0}};
      int r = poll(fds, 2, sfd_ >= 0 ? -1 : 10);
      if (r < 0 && errno != EINTR) return;  // cannot wait: kill everything
      DrainSignalfd();
      ReapReady();
      if (fds[1].revents) {
        char cmds[16];
        ssize_t n = read(plan_.control_fd, cmds, sizeof cmds);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        // EOF: ratchet is gone (even by SIGKILL), and nothing of the run may outlive it.
        if (n <= 0) return;
        for (ssize_t i = 0; i < n; ++i) {
          if (cmds[i] == kControlKill) return;
          if (cmds[i] == kControlTerminate) Signal(SIGTERM);
          if (cmds[i] == kControlInterrupt) Signal(SIGINT);
        }
      }
    }
  }

  // Phase 2: SIGKILL every descendant, reap, and repeat until the kernel says
  // there are no children left (ECHILD). A process forked just before its
  // parent was killed is re-parented here and found on the next pass; the
  // short poll bounds each pass even if no SIGCHLD comes.
  void KillEverything() {
    for (;;) {
      Signal(SIGKILL);
      if (ReapReady()) return;
      struct pollfd p = {sfd_, POLLIN, 0};
      poll(&p, sfd_ >= 0 ? 1 : 0, 10);
      DrainSignalfd();
    }
  }

  // Sends sig to the leader's group (atomic in the kernel, so it also catches
  // processes being forked) and to every descendant outside that group: the
  // ones that escaped with setsid/setpgid. A SIGTERM reaches each process once.
  // Under the sandbox's layers, SIGTERM goes to the command's processes
  // alone (see SupervisorPlan::sandbox_layers).
  void Signal(int sig) {
    bool layers = plan_.sandbox_layers && sig != SIGKILL;
    bool group_alive = leader_ > 0 && !leader_reaped_;
    if (group_alive && !layers) kill(-leader_, sig);
    pid_t pids[kMaxPids];
    int n = ListDescendants(getpid(), pids, kMaxPids);
    for (int i = 0; i < n; ++i) {
      if (layers) {
        if (pids[i] != leader_ && ParentOf(pids[i]) != leader_) kill(pids[i], sig);
      } else if (sig == SIGKILL || !group_alive || getpgid(pids[i]) != leader_) {
        kill(pids[i], sig);
      }
    }
  }

  // Reaps every child that has ended. True when none is left at all.
  bool ReapReady() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        if (pid == leader_) {
          leader_reaped_ = true;
          leader_status_ = status;
        }
        continue;
      }
      if (pid == 0) return false;
      if (errno == EINTR) continue;
      return true;  // ECHILD
    }
  }

  void DrainSignalfd() {
    if (sfd_ < 0) return;
    struct signalfd_siginfo info[8];
    while (read(sfd_, info, sizeof info) > 0) {
    }
  }

  const SupervisorPlan& plan_;
  int sfd_ = -1;
  pid_t leader_ = -1;
  bool leader_reaped_ = false;
  int leader_status_ = 0;
};

}  // namespace

void SupervisorMain(const SupervisorPlan& plan) { Supervisor(plan).Main(); }

}  // namespace ratchet
