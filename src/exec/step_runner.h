// The real StepRunner (core/runner.h): many steps in flight, one thread.
// Start prepares a step and starts its supervisor (step.h) and returns; Wait
// polls every running step's descriptors at once (output, stdin, the
// supervisor's pidfd and records, bwrap's status, cgroup events) plus an
// eventfd for Wake, and ticks each step at its own next deadline, so one
// step's deadline, kill or memory sample never waits on another's output.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runner.h"
#include "exec/local_runner.h"
#include "exec/unique_fd.h"

namespace ratchet {

class Step;

class LocalStepRunner : public StepRunner {
 public:
  explicit LocalStepRunner(LocalRunnerOptions options = {});
  /// Steps still running are killed at once and waited for.
  ~LocalStepRunner() override;
  LocalStepRunner(const LocalStepRunner&) = delete;
  LocalStepRunner& operator=(const LocalStepRunner&) = delete;

  /// See StepRunner. A spec with sandbox.enabled where the sandbox cannot
  /// work fails to start (Wait reports kFailedToStart with the reason).
  StepId Start(const RunSpec& spec) override;
  /// See StepRunner: the pipes are made here, each end given to its one
  /// process and closed here once both are started.
  void StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                      StepId* verifier_id, std::vector<StepId>* server_ids) override;
  /// See StepRunner. Results ready are returned before a pending Wake is
  /// honoured; the Wake then ends the next Wait. on_line callbacks run here
  /// and may call Start and Cancel (not Wait).
  bool Wait(double max_wait_s, StepId* id, RunResult* result) override;
  void Cancel(StepId id) override;
  void Wake() override;
  size_t Running() const override;

  /// Whether RunSpec::sandbox works here (probed once per process).
  bool SandboxAvailable(std::string* why = nullptr);

 private:
  // Ticks every step and moves the finished ones to finished_; returns the
  // earliest time a step wants its next tick.
  std::chrono::steady_clock::time_point TickAll();

  LocalRunnerOptions options_;
  std::map<StepId, std::unique_ptr<Step>> steps_;
  std::deque<std::pair<StepId, RunResult>> finished_;
  UniqueFd wake_;  // eventfd
  StepId next_id_ = 1;
};

}  // namespace ratchet
