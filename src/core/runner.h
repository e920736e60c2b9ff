// The process-runner ports: how policy code asks for a command to be run.
// The real implementation (src/exec/local_runner.h) runs a process tree with a
// deadline, contained by the kernel where it can be (a cgroup, a pid
// namespace) and, for untrusted steps, inside the sandbox; tests use fakes
// that return scripted results.
//
// Two ways to run: ProcessRunner::Run blocks until one command is over (for
// proposers and mechanisms, which run one command at a time on their own
// thread); StepRunner starts steps and reports whichever finishes first, in
// ninja's manner, so that the engine can have many steps in flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratchet {

/// One path of the host shown inside the sandbox.
struct Mount {
  enum class Kind {
    kReadOnly,  // bound read-only
    kWritable,  // bound read-write
    kDevice,    // a device node or folder of them, bound with device access (GPUs)
    kHidden,    // an empty tmpfs over `target`: hides what a wider mount showed there
  };
  std::string source;  // host path (absolute); unused for kHidden
  std::string target;  // path inside the sandbox (absolute); "" means the same as source
  Kind kind = Kind::kReadOnly;
  bool optional = false;  // skipped when `source` does not exist
};

/// What an untrusted step may see and do. The view is built from nothing: the
/// system read-only (/usr, /bin, /sbin, /lib*, /etc, /opt, /sys where they
/// exist), a new /proc, a minimal /dev with the GPU device nodes the host has
/// (/dev/nvidia*, /dev/dri), a private /tmp, a scratch $HOME, and then
/// `mounts` in order (later ones on top of earlier ones). Nothing else of the
/// host exists inside: not the loop directory, its .git or .ratchet, other
/// users' files, ratchet's key. New user, mount, pid, IPC and UTS namespaces;
/// the caller is mapped to an unprivileged uid; no capabilities; the step dies
/// with its parent; no network unless `network`.
struct SandboxSpec {
  bool enabled = false;  // false: a plain process (trusted steps, or the sandbox opted out)
  std::vector<Mount> mounts;
  /// Host folder bound writable at $HOME (and exported as HOME); "" means an
  /// empty tmpfs.
  std::string home;
  bool network = false;  // share the host's network; else an empty network namespace
  /// Let the step create user namespaces of its own (an agent CLI that
  /// sandboxes its tools); off, the sandbox forbids it where bwrap can.
  bool nested_namespaces = false;
};

/// Kernel limits on a step's whole process tree; 0 means none. Memory and
/// processes need a cgroup (see RunResult::containment); without one they are
/// enforced by sampling the tree and killing it when over (memory) or not at
/// all (pids), and RunResult::limits_enforced says so.
struct StepLimits {
  uint64_t memory_bytes = 0;
  uint64_t pids = 0;
  uint64_t file_bytes = 0;  // the largest file the step may write (RLIMIT_FSIZE)
  bool any() const { return memory_bytes || pids || file_bytes; }
};

struct RunSpec {
  /// argv[0] is looked up in PATH. For a shell command line use ShellCommand().
  std::vector<std::string> argv;
  std::string cwd;  // empty: the current directory (inside the sandbox when there is one)
  /// Added to (or overriding) ratchet's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  /// Leaves out of ratchet's environment every variable whose name looks
  /// like a credential (API keys, webhook tokens, RATCHET_KEY_FILE): builds
  /// and runs need none. What `env` sets is passed all the same.
  bool drop_secret_env = false;
  /// Hard limit in seconds; 0 means none. At the deadline every process of
  /// the step gets SIGTERM, then SIGKILL after grace_s. Measured by ratchet's
  /// monotonic clock: a step whose wall time exceeds timeout_s + grace_s is
  /// reported as kTimedOut whatever else happened (it was stopped, ratchet
  /// was stopped, ...).
  double timeout_s = 0;
  double grace_s = 5;
  /// The signal sent first at the deadline or on cancel: SIGTERM, or SIGINT
  /// (2) for an agent CLI that prints its usage report when interrupted, as
  /// on Ctrl-C. SIGKILL follows grace_s later either way.
  int stop_signal = 15;
  /// stdout and stderr, interleaved, are written here (created, truncated).
  /// Empty: output is not written to a file.
  std::string log_path;
  /// At most this many bytes of output reach log_path; the rest is dropped
  /// and a note is written, then the last tail_bytes of output at the end.
  uint64_t log_limit_bytes = 16ull << 20;
  /// Given to the process on stdin; without it stdin is /dev/null.
  std::optional<std::string> stdin_data;
  /// Called with every complete output line (no newline), as it arrives: on
  /// the thread that is in Run, or in StepRunner::Wait.
  std::function<void(std::string_view line)> on_line;
  /// Blocking Run only: when this becomes true the run is stopped like a
  /// timeout and reported as cancelled. May be null. (StepRunner: Cancel.)
  const std::atomic<bool>* cancel = nullptr;
  /// Extra descriptors for the command: {child_fd, parent_fd}. parent_fd
  /// (owned by the caller, who may close it once the step has started)
  /// becomes child_fd in the command. child_fd 0 or 1 replaces stdin or
  /// stdout (the captured output is then stderr alone). Used to connect a
  /// trusted verifier (fds 3 and 4) with the candidate's model server
  /// (fds 0 and 1) through two pipes.
  std::vector<std::pair<int, int>> fds;
  SandboxSpec sandbox;
  StepLimits limits;
  /// Legacy, until every caller sets `sandbox`: paths the process must not
  /// write, bound read-only over a view of the whole host (bwrap --dev-bind /
  /// /) where bwrap works; ignored when sandbox.enabled.
  std::vector<std::string> readonly_paths;
  /// How many bytes of the end of the output RunResult::tail keeps.
  size_t tail_bytes = 64 << 10;
  /// A step a batch executor (exec/slurm_runner.h) runs as a cluster job,
  /// with these extra scheduler options; other runners run it here.
  bool batch = false;
  std::vector<std::string> batch_options;
};

/// Wraps a shell command line as {"/bin/sh", "-c", line}.
inline std::vector<std::string> ShellCommand(const std::string& line) {
  return {"/bin/sh", "-c", line};
}

struct RunResult {
  enum class End {
    kExited,
    kSignaled,
    kTimedOut,
    kCancelled,
    kFailedToStart,
    kLimit,  // killed by the kernel or ratchet for exceeding a StepLimits value
  };
  enum class Limit { kNone, kMemory, kPids, kFileSize };
  End end = End::kFailedToStart;
  int exit_code = -1;  // valid when end == kExited
  int signal = 0;      // valid when end == kSignaled
  Limit limit = Limit::kNone;  // valid when end == kLimit
  double wall_s = 0;           // ratchet's monotonic clock, start to the last process gone
  double cpu_s = 0;            // user + system of the whole process tree
  double peak_rss_mb = 0;      // peak memory of the whole tree (cgroup peak where there is one)
  uint64_t output_bytes = 0;   // all output produced, including dropped bytes
  bool output_truncated = false;
  /// True when the step ran inside the sandbox of RunSpec::sandbox.
  bool sandboxed = false;
  /// How the step's processes were held together and killed: "cgroup",
  /// "pid namespace" or "supervisor" (descendants through /proc).
  std::string containment;
  /// False when RunSpec::limits asked for something this machine could not
  /// enforce (no cgroup); `error` then says which.
  bool limits_enforced = true;
  std::string tail;   // the last tail_bytes of output
  std::string error;  // why it failed to start, or other runner trouble
  bool ok() const { return end == End::kExited && exit_code == 0; }
  /// "exit 0", "exit 3", "signal 9 (Killed)", "timed out after 12.0s",
  /// "memory limit exceeded", ...
  std::string Describe() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  /// Runs to completion. When it returns, no process of the run is left.
  /// Thread-safe in the real implementation.
  virtual RunResult Run(const RunSpec& spec) = 0;
  /// Whether RunSpec::sandbox can be honoured here; when not, *why says what
  /// failed (no bwrap, no user namespaces) and a spec with the sandbox
  /// enabled fails to start rather than run unconfined.
  virtual bool SandboxAvailable(std::string* why) {
    if (why) *why = "this runner has no sandbox";
    return false;
  }
};

/// Many steps at once (ninja's CommandRunner): Start returns at once, Wait
/// reports the next step to finish. Used by one thread (the engine's); only
/// Wake may be called from others.
class StepRunner {
 public:
  using StepId = uint64_t;
  virtual ~StepRunner() = default;
  /// Starts a step (the spec is copied). Never blocks on the command; a step
  /// that cannot start is reported by Wait as kFailedToStart.
  virtual StepId Start(const RunSpec& spec) = 0;
  /// Starts a trusted `verifier` and the candidate's `servers` together,
  /// connected by pipes made here: server k (0-based) reads on its stdin what
  /// the verifier writes to its fd 3 + 2k, and its stdout is the verifier's
  /// fd 4 + 2k (the server's stderr alone is its output). Every step is
  /// reported by Wait, in any order. A server that dies makes the verifier
  /// read EOF on its fd. Independent servers (no shared writable storage)
  /// let a verifier ask one what it tells the other.
  virtual void StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                              StepId* verifier_id, std::vector<StepId>* server_ids) = 0;
  /// Waits up to max_wait_s (0: only what is ready) for a step to finish,
  /// even when none is running (so that Wake can end the wait). True with
  /// *id and *result when one did; false on timeout or when woken. Enforces
  /// every running step's deadline meanwhile, and calls on_line callbacks.
  virtual bool Wait(double max_wait_s, StepId* id, RunResult* result) = 0;
  /// Stops a running step now (SIGTERM, grace, SIGKILL); Wait reports it as
  /// kCancelled. Unknown or finished ids are ignored.
  virtual void Cancel(StepId id) = 0;
  /// Makes a Wait in progress (or the next one) return false at once.
  /// Thread-safe: for threads that finished work the engine waits on.
  virtual void Wake() = 0;
  /// Steps started and not yet reported by Wait.
  virtual size_t Running() const = 0;

  /// Steps an earlier session started that outlived it (a batch executor's
  /// cluster jobs, when ratchet was killed): whether one that writes
  /// `log_path` is still running, or finished with its result kept, so that
  /// Start with a spec of that log path takes it over (reattaches) instead
  /// of starting the command again. Local steps never outlive ratchet.
  virtual bool CanReattach(const std::string& log_path) const {
    (void)log_path;
    return false;
  }
  /// Ends every earlier-session step that was not reattached (cancels it
  /// and waits until it is gone); a line for the user about each.
  virtual std::vector<std::string> EndLeftovers() { return {}; }
};

}  // namespace ratchet
