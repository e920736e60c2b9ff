// A StepRunner over any ProcessRunner: each step runs on a thread of its
// own through the blocking Run, and Wait reports them as they finish. Kept
// small on purpose; the reactor in local_runner.h does the same on one
// thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "core/runner.h"

namespace ratchet {

class ThreadStepRunner : public StepRunner {
 public:
  explicit ThreadStepRunner(ProcessRunner* runner) : runner_(runner) {}
  ~ThreadStepRunner() override;

  StepId Start(const RunSpec& spec) override;
  void StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                      StepId* verifier_id, std::vector<StepId>* server_ids) override;
  bool Wait(double max_wait_s, StepId* id, RunResult* result) override;
  void Cancel(StepId id) override;
  void Wake() override;
  size_t Running() const override;

 private:
  struct Step {
    StepId id = 0;
    RunSpec spec;
    std::atomic<bool> cancel{false};
    std::thread thread;
    std::vector<int> close_after_start;  // our ends of its pipes
  };
  StepId Launch(std::unique_ptr<Step> step);

  ProcessRunner* runner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  StepId next_ = 1;
  std::list<std::unique_ptr<Step>> steps_;
  std::deque<std::pair<StepId, RunResult>> done_;
  bool woken_ = false;
};

}  // namespace ratchet
