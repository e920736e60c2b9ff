#include "exec/local_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "exec/output_sink.h"
#include "exec/proc_tree.h"
#include "exec/sandbox.h"
#include "exec/spawn_args.h"
#include "exec/supervisor.h"
#include "exec/supervisor_process.h"
#include "exec/unique_fd.h"

extern char** environ;

namespace ratchet {
namespace {

using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

// How often the cancel flag is polled, at most.
constexpr auto kCancelPoll = std::chrono::milliseconds(50);
// Memory is sampled at 10 ms, 20, 40, ... then every 250 ms: cheap for the
// many short commands, still a few samples a second for long runs. The
// largest single process's peak also comes from rusage, so a short-lived
// peak between samples is not lost.
constexpr auto kFirstSample = std::chrono::milliseconds(10);
constexpr auto kMaxSampleInterval = std::chrono::milliseconds(250);
constexpr size_t kReadChunk = 64 << 10;
// Reads per wake-up: bounded so a command that prints faster than we read
// cannot starve the deadline checks.
constexpr int kReadsPerWake = 16;

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// A pipe whose ends are never fds 0-2 (ratchet may have been started with
// those closed; the command's dup2 onto 0-2 must not clobber them).
bool MakePipe(UniqueFd* read_end, UniqueFd* write_end, std::string* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *err = ErrnoText("pipe");
    return false;
  }
  for (int& fd : fds) {
    if (fd < 3) {
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
      close(fd);
      fd = moved;
    }
  }
  read_end->Reset(fds[0]);
  write_end->Reset(fds[1]);
  if (fds[0] < 0 || fds[1] < 0) {
    *err = ErrnoText("pipe");
    return false;
  }
  return true;
}

void SetNonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Writing to a pipe whose reader is gone raises SIGPIPE, which would kill
// ratchet. Block it in this thread while the run lasts, and swallow one that
// became pending, rather than changing the process-wide disposition.
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

 private:
  sigset_t pipe_;
  bool was_blocked_ = false;
};

// The signals this process ignores, from the SigIgn line of
// /proc/self/status; all ones if it cannot be read (then all are reset).
uint64_t IgnoredSignals() {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ~0ull;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return ~0ull;
  buf[n] = '\0';
  const char* line = std::strstr(buf, "\nSigIgn:");
  if (!line) return ~0ull;
  char* end = nullptr;
  unsigned long long mask = std::strtoull(line + 8, &end, 16);
  return end == line + 8 ? ~0ull : mask;
}

// One run, from preparation to the result.
class RunOnce {
 public:
  RunOnce(const RunSpec& spec, const LocalRunnerOptions& options, RunResult* result)
      : spec_(spec), options_(options), result_(result) {}
  // Normally the supervisor is reaped by Finish(). If not (an exception),
  // closing the control pipe makes it kill the run and exit; it must be gone
  // before the plan it reads is freed.
  ~RunOnce() {
    control_w_.Reset();
    process_.Reap();
  }

  // Everything that can fail before a process exists; errors are kFailedToStart.
  bool Prepare(const std::string& bwrap_if_sandboxed) {
    std::string* err = &result_->error;
    if (spec_.argv.empty()) {
      *err = "cannot run an empty command";
      return false;
    }
    if (!spec_.cwd.empty()) {
      struct stat st;
      int e = stat(spec_.cwd.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
      if (e != 0) {
        *err = "cannot run '" + spec_.argv[0] + "': working directory '" + spec_.cwd +
               "': " + std::strerror(e);
        return false;
      }
    }
    std::vector<std::string> env = MergeEnvironment(environ, spec_.env);
    std::string path_env;
    FindEnv(env, "PATH", &path_env);
    std::string program;
    if (!FindProgram(spec_.argv[0], path_env, spec_.cwd, &program, err)) return false;
    std::vector<std::string> argv = spec_.argv;
    if (!bwrap_if_sandboxed.empty()) {
      argv = BwrapArgv(bwrap_if_sandboxed, spec_.readonly_paths, spec_.cwd, program, spec_.argv);
      if (!FindProgram(argv[0], path_env, spec_.cwd, &program, err)) return false;
      result_->sandboxed = true;
    }
    program_ = std::move(program);
    argv_ = std::make_unique<CStringArray>(std::move(argv));
    envp_ = std::make_unique<CStringArray>(std::move(env));

    if (!spec_.log_path.empty()) {
      log_.Reset(open(spec_.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (!log_.valid()) {
        *err = ErrnoText("cannot open the log '" + spec_.log_path + "'");
        return false;
      }
    }
    if (!MakePipe(&out_r_, &out_w_, err) || !MakePipe(&status_r_, &status_w_, err) ||
        !MakePipe(&control_r_, &control_w_, err)) {
      return false;
    }
    if (spec_.stdin_data) {
      if (!MakePipe(&in_r_, &in_w_, err)) return false;
      SetNonblocking(in_w_.get());
    } else {
      int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && fd < 3) {
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = moved;
      }
      in_r_.Reset(fd);
      if (!in_r_.valid()) {
        *err = ErrnoText("/dev/null");
        return false;
      }
    }
    SetNonblocking(out_r_.get());
    return true;
  }

  // Starts the supervisor; false (with result_->error) if it could not be.
  bool Start() {
    plan_.path = program_.c_str();
    plan_.argv = argv_->get();
    plan_.envp = envp_->get();
    plan_.cwd = spec_.cwd.empty() ? nullptr : spec_.cwd.c_str();
    plan_.stdin_fd = in_r_.get();
    plan_.output_fd = out_w_.get();
    plan_.status_fd = status_w_.get();
    plan_.control_fd = control_r_.get();
    plan_.ignored_signals = IgnoredSignals();
    if (!process_.Start(&plan_, options_.share_memory, &result_->error)) return false;
    supervisor_ = process_.pid();
    // Only the run may hold the write end of the output pipe, so that
    // nothing of ours keeps it open.
    out_w_.Reset();
    in_r_.Reset();
    status_w_.Reset();
    control_r_.Reset();
    pidfd_.Reset(PidfdOpen(supervisor_));
    // The supervisor's kStarted record is read in the loop, not waited for
    // here: one wake-up less for a short command.
    SetNonblocking(status_r_.get());
    return true;
  }

  // The event loop: output, stdin, deadline, cancel, memory samples, until
  // the supervisor has exited (and with it every process of the run).
  void Loop(OutputSink* sink) {
    const auto start = start_;
    const auto never = Clock::time_point::max();
    auto deadline =
        spec_.timeout_s > 0
            ? start + std::chrono::duration_cast<Clock::duration>(Seconds(spec_.timeout_s))
            : never;
    auto kill_at = never;
    auto sample_interval = std::chrono::duration_cast<Clock::duration>(kFirstSample);
    auto next_sample = start + sample_interval;
    size_t stdin_off = 0;
    std::vector<char> buf(kReadChunk);

    while (!supervisor_done_) {
      auto now = Clock::now();
      if (!stopping_) {
        if (now >= deadline) {
          Stop(RunResult::End::kTimedOut, now, &kill_at);
        } else if (spec_.cancel && spec_.cancel->load()) {
          Stop(RunResult::End::kCancelled, now, &kill_at);
        }
      }
      if (now >= kill_at) {
        SendControl(kControlKill);
        kill_at = never;
      }
      if (now >= next_sample) {
        Sample();
        sample_interval = std::min<Clock::duration>(sample_interval * 2, kMaxSampleInterval);
        next_sample = now + sample_interval;
      }

      auto wake = std::min({stopping_ ? never : deadline, kill_at, next_sample});
      if (spec_.cancel && !stopping_) wake = std::min(wake, now + kCancelPoll);
      int timeout_ms = static_cast<int>(std::ceil(
          std::chrono::duration<double, std::milli>(std::max(wake - now, Clock::duration::zero()))
              .count()));

      struct pollfd fds[4];
      int n = 0;
      int out_i = -1, in_i = -1, done_i = -1, status_i = -1;
      if (out_r_.valid()) fds[out_i = n++] = {out_r_.get(), POLLIN, 0};
      if (in_w_.valid()) fds[in_i = n++] = {in_w_.get(), POLLOUT, 0};
      // The supervisor's exit, via its pidfd; without one (kernels before
      // 5.3), the status pipe's EOF says the same. Its records arrive on
      // the status pipe.
      if (pidfd_.valid()) fds[done_i = n++] = {pidfd_.get(), POLLIN, 0};
      if (status_r_.valid()) fds[status_i = n++] = {status_r_.get(), POLLIN, 0};
      int r = poll(fds, n, timeout_ms);
      if (r < 0) {
        if (errno == EINTR) continue;
        result_->error = ErrnoText("poll");
        SendControl(kControlKill);
        break;
      }
      if (out_i >= 0 && fds[out_i].revents) ReadOutput(sink, buf.data(), kReadsPerWake);
      if (in_i >= 0 && fds[in_i].revents) FeedStdin(&stdin_off);
      if (status_i >= 0 && fds[status_i].revents) ReadStatus();
      if (done_i >= 0 && fds[done_i].revents) supervisor_done_ = true;
    }
    // Every process of the run is gone: what they wrote is in the pipe.
    if (out_r_.valid()) ReadOutput(sink, buf.data(), -1);
  }

  // Reaps the supervisor and fills the result.
  void Finish(OutputSink* sink) {
    process_.Reap();
    ReadStatus();
    sink->Finish();
    auto end = Clock::now();
    RunResult& r = *result_;
    r.wall_s = Seconds(end - start_).count();
    r.output_bytes = sink->total_bytes();
    r.output_truncated = sink->truncated();
    r.tail = sink->tail();
    if (!done_received_) {
      // The supervisor was killed from outside. The command got SIGKILL with
      // it (parent-death signal); kill its group too. Processes that had
      // left the group may survive: say so.
      if (leader_ > 0) kill(-leader_, SIGKILL);
      if (r.error.empty()) {
        r.error =
            "the run supervisor died unexpectedly; processes that left the run's group may "
            "be left";
      }
      if (!stopping_) r.end = RunResult::End::kSignaled, r.signal = SIGKILL;
    } else {
      r.cpu_s = (done_.user_us + done_.sys_us) / 1e6;
      peak_kb_ = std::max<uint64_t>(peak_kb_, static_cast<uint64_t>(done_.maxrss_kb));
      if (!start_error_.empty()) {
        r.end = RunResult::End::kFailedToStart;
        r.error = start_error_;
      } else if (!stopping_ && done_.leader_reaped) {
        if (WIFEXITED(done_.leader_status)) {
          r.end = RunResult::End::kExited;
          r.exit_code = WEXITSTATUS(done_.leader_status);
        } else if (WIFSIGNALED(done_.leader_status)) {
          r.end = RunResult::End::kSignaled;
          r.signal = WTERMSIG(done_.leader_status);
        }
      }
    }
    if (stopping_) r.end = stop_end_;
    r.peak_rss_mb = static_cast<double>(peak_kb_) / 1024.0;
    if (r.error.empty() && !sink->log_error().empty()) r.error = sink->log_error();
  }

  int log_fd() const { return log_.get(); }
  void set_start(Clock::time_point t) { start_ = t; }

 private:
  void Stop(RunResult::End why, Clock::time_point now, Clock::time_point* kill_at) {
    stopping_ = true;
    stop_end_ = why;
    if (spec_.grace_s > 0) {
      SendControl(spec_.stop_signal == SIGINT ? kControlInterrupt : kControlTerminate);
      *kill_at = now + std::chrono::duration_cast<Clock::duration>(Seconds(spec_.grace_s));
    } else {
      *kill_at = now;  // kill on this very iteration
    }
  }

  void SendControl(char c) {
    if (!control_w_.valid()) return;
    // EPIPE (the supervisor already finished) is fine: SIGPIPE is blocked.
    while (write(control_w_.get(), &c, 1) < 0 && errno == EINTR) {
    }
  }

  // max_reads < 0: until the pipe is empty (used once every writer is gone).
  void ReadOutput(OutputSink* sink, char* buf, int max_reads) {
    for (int i = 0; max_reads < 0 || i < max_reads; ++i) {
      ssize_t n = read(out_r_.get(), buf, kReadChunk);
      if (n > 0) {
        sink->Add(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) out_r_.Reset();  // EOF: every writer closed it
      return;                      // EAGAIN: nothing more for now
    }
  }

  // Feeds stdin_data without blocking, so a command that writes a lot before
  // reading all its input cannot deadlock with us.
  void FeedStdin(size_t* off) {
    const std::string& data = *spec_.stdin_data;
    while (*off < data.size()) {
      ssize_t w = write(in_w_.get(), data.data() + *off, data.size() - *off);
      if (w > 0) {
        *off += static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EAGAIN) return;
      break;  // EPIPE: the command stopped reading, which is its right
    }
    in_w_.Reset();  // all written (or unwanted): the command sees EOF
  }

  // Reads the supervisor's records that have arrived.
  void ReadStatus() {
    if (!status_r_.valid()) return;
    SupervisorMessage m;
    while (ReadMessage(&m)) {
      if (m.kind == SupervisorMessage::kStarted) {
        leader_ = m.leader_pid;
        if (m.error_stage != SupervisorMessage::kNoError) {
          start_error_ = "cannot run '" + spec_.argv[0] + "': ";
          if (m.error_stage == SupervisorMessage::kStageChdir) {
            start_error_ += "working directory '" + spec_.cwd + "': ";
          }
          start_error_ += std::strerror(m.error_errno);
        }
      } else if (m.kind == SupervisorMessage::kDone) {
        done_ = m;
        done_received_ = true;
      }
    }
  }

  // One whole record; false at EOF, EAGAIN or error. EOF closes the pipe
  // and, without a pidfd, means the supervisor is done.
  bool ReadMessage(SupervisorMessage* m) {
    ssize_t n;
    do {
      n = read(status_r_.get(), m, sizeof *m);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof *m) return true;
    if (n == 0 || (n > 0 && n < static_cast<ssize_t>(sizeof *m))) {
      status_r_.Reset();
      if (!pidfd_.valid()) supervisor_done_ = true;
    }
    return false;
  }

  // Adds up the resident memory of the run's processes now (the supervisor's
  // descendants), and keeps the largest sum and the largest single peak.
  void Sample() {
    pid_t pids[1024];
    int n = ListDescendants(supervisor_, pids, 1024);
    uint64_t sum = 0;
    for (int i = 0; i < n; ++i) {
      ProcMemory mem;
      if (!ReadProcMemory(pids[i], &mem)) continue;
      sum += mem.rss_kb;
      peak_kb_ = std::max(peak_kb_, mem.hwm_kb);
    }
    peak_kb_ = std::max(peak_kb_, sum);
  }

  const RunSpec& spec_;
  const LocalRunnerOptions& options_;
  RunResult* result_;
  Clock::time_point start_;
  std::string program_;
  std::unique_ptr<CStringArray> argv_, envp_;
  UniqueFd log_, out_r_, out_w_, in_r_, in_w_, status_r_, status_w_, control_r_, control_w_;
  UniqueFd pidfd_;
  SupervisorPlan plan_;
  SupervisorProcess process_;
  pid_t supervisor_ = -1;
  pid_t leader_ = -1;
  bool supervisor_done_ = false;
  bool stopping_ = false;
  RunResult::End stop_end_ = RunResult::End::kTimedOut;
  std::string start_error_;
  SupervisorMessage done_;
  bool done_received_ = false;
  uint64_t peak_kb_ = 0;
};

}  // namespace

LocalProcessRunner::LocalProcessRunner(LocalRunnerOptions options) : options_(std::move(options)) {}

bool LocalProcessRunner::SandboxAvailable(std::string* why) {
  struct Probe {
    bool works;
    std::string why;
  };
  static std::mutex mu;
  static std::map<std::string, Probe> probes;
  if (options_.bwrap.empty()) {
    if (why) *why = "no sandbox configured";
    return false;
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = probes.find(options_.bwrap);
  if (it == probes.end()) {
    // The same shape as a real sandboxed run, on a command that cannot fail.
    RunSpec probe;
    probe.argv = {options_.bwrap, "--dev-bind", "/",  "/",   "--ro-bind",
                  "/etc",         "/etc",       "--", "true"};
    probe.timeout_s = 10;
    probe.grace_s = 1;
    LocalRunnerOptions plain = options_;
    plain.bwrap = "";
    RunResult r = LocalProcessRunner(plain).Run(probe);
    Probe p{r.ok(), ""};
    if (!p.works) {
      std::string tail = r.tail;
      while (!tail.empty() && tail.back() == '\n') tail.pop_back();
      p.why = r.end == RunResult::End::kFailedToStart
                  ? r.error
                  : r.Describe() + (tail.empty() ? "" : ": " + tail);
    }
    it = probes.emplace(options_.bwrap, p).first;
  }
  if (why) *why = it->second.why;
  return it->second.works;
}

RunResult LocalProcessRunner::Run(const RunSpec& spec) {
  RunResult result;
  const auto start = Clock::now();
  std::string bwrap;
  std::string no_sandbox_why;
  if (!spec.readonly_paths.empty() && SandboxAvailable(&no_sandbox_why)) bwrap = options_.bwrap;

  ScopedBlockSigpipe no_sigpipe;
  RunOnce run(spec, options_, &result);
  run.set_start(start);
  if (!run.Prepare(bwrap) || !run.Start()) {
    result.end = RunResult::End::kFailedToStart;
    result.wall_s = Seconds(Clock::now() - start).count();
    return result;
  }
  OutputSink sink(run.log_fd(), spec.log_limit_bytes, spec.tail_bytes, spec.on_line);
  run.Loop(&sink);
  run.Finish(&sink);
  return result;
}

}  // namespace ratchet
