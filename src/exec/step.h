// One step from preparation to its result: the per-run half of the runner.
// A reactor (step_runner.h) drives many at once: it asks each for the
// descriptors to poll, hands back what poll saw, and calls Tick, which
// enforces the step's deadline, kills, samples memory and limits, and ends
// the step once every process of it is gone.
//
// How a step is built (supervisor.h, cgroup.h, sandbox.h):
//   ratchet -- clone --> supervisor (subreaper) -- vfork+exec --> command
// The command is in the step's cgroup before execve, leads its own process
// group, and under the sandbox is bwrap, whose pid namespace holds the real
// command. Output (stdout and stderr, one pipe), the supervisor's status
// records, its pidfd, bwrap's status and the cgroup's events are polled here.
//
// Containment, the strongest this machine allows (RunResult::containment):
//   cgroup         the step's cgroup: cgroup.kill ends every process in it;
//   pid namespace  the sandbox without a cgroup: SIGKILL to the namespace's
//                  init (a pidfd of it, learnt from bwrap) ends them all;
//   supervisor     neither: the supervisor kills its descendants (found
//                  through /proc); a process that kills the supervisor and
//                  left the run's group may survive it.
// In every case the deadline is kept by ratchet's thread: SIGTERM (through
// the supervisor) at timeout_s, then the kill above at timeout_s + grace_s,
// measured from the start whatever delayed ratchet; a supervisor that does
// not finish a second after that (the run stopped it) is killed too. A step
// whose wall time exceeds timeout_s + grace_s is reported as kTimedOut.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/runner.h"
#include "exec/cgroup.h"
#include "exec/output_sink.h"
#include "exec/sandbox.h"
#include "exec/spawn_args.h"
#include "exec/supervisor.h"
#include "exec/supervisor_process.h"
#include "exec/unique_fd.h"

namespace ratchet {

/// What the runner decided for every step of it.
struct StepContext {
  bool share_memory = true;  // see LocalRunnerOptions
  bool cgroups = true;       // a cgroup per step where the machine allows
  /// The sandbox for RunSpec::sandbox; null when it cannot work here, then
  /// sandbox_why says why and a step that asks for it fails to start.
  const SandboxHost* sandbox = nullptr;
  std::string sandbox_why;
  /// bwrap for the legacy readonly_paths, when it works here; "" runs such
  /// steps without it.
  std::string legacy_bwrap;
};

class Step {
 public:
  using Clock = std::chrono::steady_clock;

  Step(const RunSpec& spec, const StepContext& context);
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  /// A step still running is killed at once and waited for.
  ~Step();

  /// Prepares and starts the step; false when it could not start (done()
  /// is then true and the result says why).
  bool Start();

  /// Appends the descriptors to poll; HandleEvents gets the same vector back.
  void AddPollFds(std::vector<pollfd>* fds);
  void HandleEvents(const std::vector<pollfd>& fds);
  /// Deadlines, kills, samples, and the end of the step. Returns when it
  /// wants to be called again at the latest (time_point::max(): never).
  Clock::time_point Tick(Clock::time_point now);

  /// Stops the step like a timeout; it is reported as kCancelled.
  void Cancel() { cancel_requested_ = true; }
  /// Kills the step now, without waiting (the runner is going away; the
  /// destructor then waits).
  void KillNow();
  bool done() const { return done_; }
  /// The result, once done().
  const RunResult& result() const { return result_; }

 private:
  static Clock::duration Duration(double seconds) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  bool Prepare();
  bool PrepareSandbox(std::vector<std::string>* argv, const std::string& path_env);
  bool Launch();
  void Fail();
  void Stop(RunResult::End why, RunResult::Limit limit, Clock::time_point kill_at,
            Clock::time_point now);
  void Kill(Clock::time_point now);
  void ForceSupervisor();
  void KillContained();
  void OnSupervisorGone(Clock::time_point now);
  void Complete();
  void SendControl(char c);
  void ReadOutput(int max_reads);
  void FeedStdin();
  void ReadStatus();
  bool ReadMessage(SupervisorMessage* m);
  void ReadBwrapStatus();
  void FindNamespaceInit();
  void Sample(Clock::time_point now);

  RunSpec spec_;
  StepContext context_;
  RunResult result_;
  Clock::time_point start_;
  Clock::time_point deadline_ = Clock::time_point::max();

  // What the supervisor needs, kept alive until it is reaped.
  std::string program_;
  std::unique_ptr<CStringArray> argv_, envp_;
  std::string cwd_;  // for the supervisor's chdir ("" under the sandbox)
  SupervisorPlan plan_;
  SupervisorProcess process_;
  std::vector<std::pair<int, int>> fds_;  // {child, parent}, with bwrap's status fd
  bool sandboxed_ = false;                // the SandboxSpec sandbox (pid namespace)

  UniqueFd log_, out_r_, out_w_, in_r_, in_w_, status_r_, status_w_, control_r_, control_w_;
  UniqueFd bwrap_r_, bwrap_w_;  // bwrap --json-status-fd
  UniqueFd pidfd_;              // the supervisor's
  UniqueFd ns_init_;            // pidfd of the pid namespace's init
  std::unique_ptr<OutputSink> sink_;
  std::vector<char> buf_;
  size_t stdin_off_ = 0;
  std::string bwrap_status_;
  pid_t ns_init_pid_ = -1;
  bool ns_init_checked_ = false;

  StepCgroup cgroup_;
  std::string notes_;  // limits this machine could not enforce

  int out_i_ = -1, in_i_ = -1, pidfd_i_ = -1, status_i_ = -1, bwrap_i_ = -1, events_i_ = -1;

  pid_t supervisor_ = -1;
  pid_t leader_ = -1;
  bool supervisor_done_ = false;
  bool supervisor_gone_handled_ = false;
  bool cancel_requested_ = false;
  bool stopping_ = false;
  RunResult::End stop_end_ = RunResult::End::kTimedOut;
  RunResult::Limit stop_limit_ = RunResult::Limit::kNone;
  Clock::time_point kill_at_ = Clock::time_point::max();
  bool killed_ = false;
  Clock::time_point watchdog_at_ = Clock::time_point::max();
  bool forced_ = false;  // ratchet killed the supervisor itself
  bool draining_ = false;
  Clock::time_point drain_until_ = Clock::time_point::max();
  Clock::duration sample_interval_{};
  Clock::time_point next_sample_ = Clock::time_point::max();
  std::string start_error_;
  SupervisorMessage done_msg_;
  bool done_received_ = false;
  uint64_t peak_kb_ = 0;
  bool done_ = false;
};

}  // namespace ratchet
