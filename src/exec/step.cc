#include "exec/step.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exec/block_sigpipe.h"
#include "exec/pidfd.h"
#include "exec/proc_tree.h"

// Step, while it runs: events, deadlines, kills, samples and the result
// (see step.h; starting it is in step_start.cc).
namespace ratchet {
namespace {

using Clock = Step::Clock;
using Seconds = std::chrono::duration<double>;

// Memory is sampled at 10 ms (Launch), 20, 40, ... then every 250 ms: cheap
// for the many short commands, still a few samples a second for long runs.
// The largest single process's peak also comes from rusage, so a
// short-lived peak between samples is not lost. Limits (OOM kills,
// pids.max) are checked on the same ticks.
constexpr auto kMaxSampleInterval = std::chrono::milliseconds(250);
constexpr size_t kReadChunk = 64 << 10;
// Reads per wake-up: bounded so a command that prints faster than we read
// cannot starve the deadline checks (nor the other steps).
constexpr int kReadsPerWake = 16;
// A supervisor told to kill that has not finished after this long was
// stopped (SIGSTOP) or is stuck: ratchet kills it.
constexpr auto kSupervisorWatchdog = std::chrono::seconds(1);
// After the supervisor is gone, how long a cgroup may take to empty.
constexpr auto kDrainLimit = std::chrono::seconds(5);
constexpr auto kDrainPoll = std::chrono::milliseconds(10);

}  // namespace

Step::Step(const RunSpec& spec, const StepContext& context)
    : spec_(spec), context_(context), buf_(kReadChunk) {
  spec_.cancel = nullptr;  // the blocking runner's; steps are cancelled by Cancel()
}

Step::~Step() {
  ScopedBlockSigpipe no_sigpipe;
  if (supervisor_ > 0 && !supervisor_gone_handled_) {
    // Still running (the runner is being destroyed): kill it now and wait,
    // briefly, for the supervisor; then for certain.
    Kill(Clock::now());
    struct pollfd p = {pidfd_.get(), POLLIN, 0};
    if (!pidfd_.valid() || poll(&p, 1, 1000) <= 0) ForceSupervisor();
    control_w_.Reset();
    process_.Reap();
    KillContained();
    for (int i = 0; i < 1000 && cgroup_.Populated(); ++i) {
      poll(nullptr, 0, 1);
      if (i % 100 == 0) cgroup_.Kill();
    }
  }
  // The supervisor must be gone before the plan it reads is freed.
  control_w_.Reset();
  process_.Reap();
}

void Step::KillNow() {
  if (supervisor_ > 0 && !supervisor_done_ && !killed_) Kill(Clock::now());
}

void Step::AddPollFds(std::vector<pollfd>* fds) {
  out_i_ = in_i_ = pidfd_i_ = status_i_ = bwrap_i_ = events_i_ = -1;
  if (done_) return;
  auto add = [&](int* index, int fd, short events) {
    *index = static_cast<int>(fds->size());
    fds->push_back({fd, events, 0});
  };
  if (out_r_.valid()) add(&out_i_, out_r_.get(), POLLIN);
  if (in_w_.valid()) add(&in_i_, in_w_.get(), POLLOUT);
  // The supervisor's exit, via its pidfd; without one (kernels before 5.3),
  // the status pipe's EOF says the same.
  if (pidfd_.valid() && !supervisor_done_) add(&pidfd_i_, pidfd_.get(), POLLIN);
  if (status_r_.valid()) add(&status_i_, status_r_.get(), POLLIN);
  if (bwrap_r_.valid()) add(&bwrap_i_, bwrap_r_.get(), POLLIN);
  // cgroup.events signals POLLPRI when the cgroup empties.
  if (draining_ && cgroup_.events_fd() >= 0) add(&events_i_, cgroup_.events_fd(), POLLPRI);
}

void Step::HandleEvents(const std::vector<pollfd>& fds) {
  auto ready = [&](int i) { return i >= 0 && fds[static_cast<size_t>(i)].revents != 0; };
  if (ready(out_i_)) ReadOutput(kReadsPerWake);
  if (ready(in_i_)) FeedStdin();
  if (ready(status_i_)) ReadStatus();
  if (ready(bwrap_i_)) ReadBwrapStatus();
  if (ready(pidfd_i_)) supervisor_done_ = true;
}

Clock::time_point Step::Tick(Clock::time_point now) {
  const auto never = Clock::time_point::max();
  if (done_) return never;
  if (!supervisor_done_) {
    if (!stopping_) {
      if (now >= deadline_) {
        // The grace period counts from the deadline, not from when ratchet
        // noticed it: a ratchet that was stopped kills at once.
        Stop(RunResult::End::kTimedOut, RunResult::Limit::kNone,
             deadline_ + Duration(spec_.grace_s), now);
      } else if (cancel_requested_) {
        Stop(RunResult::End::kCancelled, RunResult::Limit::kNone, now + Duration(spec_.grace_s),
             now);
      }
    }
    if (now >= next_sample_) Sample(now);
    if (stopping_ && !killed_ && now >= kill_at_) Kill(now);
    if (killed_ && now >= watchdog_at_) ForceSupervisor();
    auto wake = std::min(
        {stopping_ ? never : deadline_, killed_ ? never : kill_at_, watchdog_at_, next_sample_});
    return wake;
  }
  if (!supervisor_gone_handled_) OnSupervisorGone(now);
  if (draining_) {
    if (!cgroup_.Populated()) {
      draining_ = false;
    } else if (now >= drain_until_) {
      draining_ = false;
      if (!result_.error.empty()) result_.error += "; ";
      result_.error += "processes of the step are still alive in the cgroup " + cgroup_.folder();
    } else {
      cgroup_.Kill();
      return std::min(now + kDrainPoll, drain_until_);
    }
  }
  Complete();
  return never;
}

void Step::Stop(RunResult::End why, RunResult::Limit limit, Clock::time_point kill_at,
                Clock::time_point now) {
  stopping_ = true;
  stop_end_ = why;
  stop_limit_ = limit;
  if (kill_at > now) {
    // An agent CLI reports (its spend included) on SIGINT, as on Ctrl-C.
    SendControl(spec_.stop_signal == SIGINT ? kControlInterrupt : kControlTerminate);
    kill_at_ = kill_at;
  } else {
    kill_at_ = now;  // killed on this very tick
  }
}

// The hard stop, by ratchet's own thread through the kernel where it can:
// nothing the run does can delay it.
void Step::Kill(Clock::time_point now) {
  killed_ = true;
  KillContained();
  SendControl(kControlKill);
  // A supervisor the run stopped could not obey; the kill above did not
  // need it, but its exit ends the step.
  if (pidfd_.valid()) PidfdSignal(pidfd_.get(), SIGCONT);
  watchdog_at_ = now + kSupervisorWatchdog;
}

void Step::KillContained() {
  if (cgroup_.contained()) cgroup_.Kill();
  if (ns_init_.valid()) PidfdSignal(ns_init_.get(), SIGKILL);
}

// The supervisor did not finish after being told to kill: kill what it
// supervises, as it would have, then the supervisor itself.
void Step::ForceSupervisor() {
  watchdog_at_ = Clock::time_point::max();
  if (supervisor_ <= 0 || supervisor_done_) return;
  forced_ = true;
  for (int pass = 0; pass < 3; ++pass) {
    pid_t pids[4096];
    int n = ListDescendants(supervisor_, pids, 4096);
    for (int i = 0; i < n; ++i) kill(pids[i], SIGKILL);
  }
  // Our own unreaped child: its pid cannot have been reused.
  if (pidfd_.valid()) {
    PidfdSignal(pidfd_.get(), SIGKILL);
  } else {
    kill(supervisor_, SIGKILL);
  }
}

void Step::OnSupervisorGone(Clock::time_point now) {
  supervisor_gone_handled_ = true;
  process_.Reap();
  ReadStatus();
  ReadBwrapStatus();
  if (!done_received_) {
    // Killed from outside (or by the watchdog): its parent-death signal
    // took the command; the kernel takes whatever else of the run is left.
    KillContained();
    if (leader_ > 0) kill(-leader_, SIGKILL);
  }
  if (cgroup_.contained() && cgroup_.Populated()) {
    cgroup_.Kill();
    draining_ = true;
    drain_until_ = now + kDrainLimit;
  }
}

void Step::Complete() {
  // Every process of the run is gone: what they wrote is in the pipe.
  if (out_r_.valid()) ReadOutput(-1);
  sink_->Finish();
  RunResult& r = result_;
  r.wall_s = Seconds(Clock::now() - start_).count();
  r.output_bytes = sink_->total_bytes();
  r.output_truncated = sink_->truncated();
  r.tail = sink_->tail();

  double cgroup_cpu = 0;
  bool have_cgroup_cpu = cgroup_.CpuSeconds(&cgroup_cpu);
  if (done_received_) {
    r.cpu_s = (done_msg_.user_us + done_msg_.sys_us) / 1e6;
    peak_kb_ = std::max<uint64_t>(peak_kb_, static_cast<uint64_t>(done_msg_.maxrss_kb));
  }
  if (have_cgroup_cpu) r.cpu_s = cgroup_cpu;
  uint64_t peak_bytes = 0;
  if (cgroup_.PeakBytes(&peak_bytes)) peak_kb_ = peak_bytes / 1024;
  r.peak_rss_mb = static_cast<double>(peak_kb_) / 1024.0;

  if (!start_error_.empty()) {
    r.end = RunResult::End::kFailedToStart;
    r.error = start_error_;
  } else if (stopping_) {
    r.end = stop_end_;
    r.limit = stop_limit_;
  } else if (!done_received_) {
    r.end = RunResult::End::kSignaled;
    r.signal = SIGKILL;
    if (r.error.empty()) {
      r.error = cgroup_.contained() || ns_init_.valid()
                    ? "the run supervisor died unexpectedly; the step's processes were killed "
                      "through its " +
                          r.containment
                    : "the run supervisor died unexpectedly; processes that left the run's group "
                      "may be left";
    }
  } else if (done_msg_.leader_reaped) {
    if (WIFEXITED(done_msg_.leader_status)) {
      r.end = RunResult::End::kExited;
      r.exit_code = WEXITSTATUS(done_msg_.leader_status);
    } else if (WIFSIGNALED(done_msg_.leader_status)) {
      r.end = RunResult::End::kSignaled;
      r.signal = WTERMSIG(done_msg_.leader_status);
    }
  }
  if (r.end != RunResult::End::kFailedToStart) {
    if (forced_ && r.error.empty()) {
      r.error =
          "the run supervisor did not finish when told to (the run stopped it?); ratchet "
          "killed it";
    }
    if (!stopping_) {
      // What the kernel did about the limits, whatever the exit says.
      // Death by SIGXFSZ, or exit 128+SIGXFSZ: how bwrap and shells report it.
      bool xfsz = (r.end == RunResult::End::kSignaled && r.signal == SIGXFSZ) ||
                  (r.end == RunResult::End::kExited && r.exit_code == 128 + SIGXFSZ);
      RunResult::Limit hit = RunResult::Limit::kNone;
      if (cgroup_.memory_limited() && cgroup_.OomKills() > 0) {
        hit = RunResult::Limit::kMemory;
      } else if (cgroup_.pids_limited() && cgroup_.PidsMaxHits() > 0) {
        hit = RunResult::Limit::kPids;
      } else if (spec_.limits.file_bytes && xfsz) {
        hit = RunResult::Limit::kFileSize;
      }
      if (hit != RunResult::Limit::kNone) {
        r.end = RunResult::End::kLimit;
        r.limit = hit;
      }
    }
    // The one rule that holds whatever else happened (see RunSpec::timeout_s).
    if (spec_.timeout_s > 0 && r.wall_s > spec_.timeout_s + spec_.grace_s) {
      r.end = RunResult::End::kTimedOut;
      r.limit = RunResult::Limit::kNone;
    }
    if (!notes_.empty()) r.error += (r.error.empty() ? "" : "; ") + notes_;
  }
  if (r.error.empty() && !sink_->log_error().empty()) r.error = sink_->log_error();
  cgroup_.Remove();
  done_ = true;
}

void Step::SendControl(char c) {
  if (!control_w_.valid()) return;
  // EPIPE (the supervisor already finished) is fine: the runner blocks
  // SIGPIPE while it works.
  while (write(control_w_.get(), &c, 1) < 0 && errno == EINTR) {
  }
}

// max_reads < 0: until the pipe is empty (used once every writer is gone).
void Step::ReadOutput(int max_reads) {
  for (int i = 0; max_reads < 0 || i < max_reads; ++i) {
    ssize_t n = read(out_r_.get(), buf_.data(), kReadChunk);
    if (n > 0) {
      sink_->Add(buf_.data(), static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) out_r_.Reset();  // EOF: every writer closed it
    return;                      // EAGAIN: nothing more for now
  }
}

// Feeds stdin_data without blocking, so a command that writes a lot before
// reading all its input cannot deadlock with us.
void Step::FeedStdin() {
  const std::string& data = *spec_.stdin_data;
  while (stdin_off_ < data.size()) {
    ssize_t w = write(in_w_.get(), data.data() + stdin_off_, data.size() - stdin_off_);
    if (w > 0) {
      stdin_off_ += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return;
    break;  // EPIPE: the command stopped reading, which is its right
  }
  in_w_.Reset();  // all written (or unwanted): the command sees EOF
}

void Step::ReadStatus() {
  if (!status_r_.valid()) return;
  SupervisorMessage m;
  while (ReadMessage(&m)) {
    if (m.kind == SupervisorMessage::kStarted) {
      leader_ = m.leader_pid;
      if (m.error_stage != SupervisorMessage::kNoError) {
        start_error_ = "cannot run '" + spec_.argv[0] + "': ";
        switch (m.error_stage) {
          case SupervisorMessage::kStageChdir:
            start_error_ += "working directory '" + spec_.cwd + "': ";
            break;
          case SupervisorMessage::kStageCgroup:
            start_error_ += "joining its cgroup " + cgroup_.folder() + ": ";
            break;
          case SupervisorMessage::kStageFds:
            start_error_ += "passing its descriptors: ";
            break;
          case SupervisorMessage::kStageLimit:
            start_error_ += "setting its file size limit: ";
            break;
          default:
            break;
        }
        start_error_ += std::strerror(m.error_errno);
      }
      FindNamespaceInit();
    } else if (m.kind == SupervisorMessage::kDone) {
      done_msg_ = m;
      done_received_ = true;
    }
  }
}

// One whole record; false at EOF, EAGAIN or error. EOF closes the pipe
// and, without a pidfd, means the supervisor is done.
bool Step::ReadMessage(SupervisorMessage* m) {
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

// bwrap writes {"child-pid": N, ...} when the namespace's init exists (and
// more records later, which are not needed). Only the first record is
// bwrap's for sure: the command never gets this descriptor, but nothing
// after the first record is trusted anyway.
void Step::ReadBwrapStatus() {
  if (!bwrap_r_.valid()) return;
  char buf[1024];
  for (;;) {
    ssize_t n = read(bwrap_r_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) bwrap_r_.Reset();
    if (n <= 0) break;
    if (bwrap_status_.size() < 4096) bwrap_status_.append(buf, static_cast<size_t>(n));
  }
  if (ns_init_pid_ < 0) {
    size_t close = bwrap_status_.find('}');
    size_t key = bwrap_status_.find("\"child-pid\"");
    if (close != std::string::npos && key != std::string::npos && key < close) {
      size_t colon = bwrap_status_.find(':', key);
      long pid = colon < close ? std::strtol(bwrap_status_.c_str() + colon + 1, nullptr, 10) : 0;
      ns_init_pid_ = pid > 0 ? static_cast<pid_t>(pid) : 0;
      FindNamespaceInit();
    }
  }
}

// A pidfd of the namespace's init, once both its pid (from bwrap) and the
// leader's (the outer bwrap, from the supervisor) are known: it must be the
// leader's child, so that a pid reused meanwhile is never signalled.
void Step::FindNamespaceInit() {
  if (ns_init_checked_ || ns_init_pid_ <= 0 || leader_ <= 0) return;
  ns_init_checked_ = true;
  UniqueFd fd(PidfdOpen(ns_init_pid_));
  if (fd.valid() && ParentOf(ns_init_pid_) == leader_) ns_init_ = std::move(fd);
}

// Adds up the resident memory of the run's processes now (the supervisor's
// descendants), and keeps the largest sum and the largest single peak; and
// enforces the limits that need watching.
void Step::Sample(Clock::time_point now) {
  sample_interval_ = std::min<Clock::duration>(sample_interval_ * 2, kMaxSampleInterval);
  next_sample_ = now + sample_interval_;
  bool sampled_limit = spec_.limits.memory_bytes && !cgroup_.memory_limited();
  if (sampled_limit || !cgroup_.has_memory_peak()) {
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
    if (sampled_limit && !stopping_ && sum * 1024 > spec_.limits.memory_bytes) {
      Stop(RunResult::End::kLimit, RunResult::Limit::kMemory, now, now);
    }
  }
  if (stopping_) return;
  // The kernel enforces these; a step that hit one is over: a fork bomb
  // would otherwise run to its deadline, an OOM-killed step limp on.
  if (cgroup_.memory_limited() && cgroup_.OomKills() > 0) {
    Stop(RunResult::End::kLimit, RunResult::Limit::kMemory, now, now);
  } else if (cgroup_.pids_limited() && cgroup_.PidsMaxHits() > 0) {
    Stop(RunResult::End::kLimit, RunResult::Limit::kPids, now, now);
  }
}

}  // namespace ratchet
