// Proposals in flight. A fast in-process proposer (the search) is called on
// the engine's thread; one that only starts a process (an agent, a script)
// may run on a thread of its own per experiment, so several workers'
// proposals go on at once. Each job owns a snapshot of the history it was
// given, so the engine can go on changing its own.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/proposer.h"
#include "core/runner.h"

namespace ratchet {

class ProposalPool {
 public:
  struct Done {
    int experiment_id = 0;
    Proposal proposal;
    double seconds = 0;
  };

  /// `wake` is woken when a threaded proposal finishes.
  ProposalPool(Proposer* proposer, StepRunner* wake, Clock* clock);
  ~ProposalPool();
  ProposalPool(const ProposalPool&) = delete;
  ProposalPool& operator=(const ProposalPool&) = delete;

  /// Proposes for `request` (whose history, in-flight list and incumbent are
  /// replaced by the pool's own copies). Not threaded: done when it returns.
  void Start(int experiment_id, ProposalRequest request, std::vector<Experiment> history,
             std::vector<Experiment> in_flight, bool threaded);
  /// The proposals finished since the last call.
  std::vector<Done> TakeFinished();
  /// Threaded proposals not finished yet.
  size_t running() const;
  /// Waits for every thread (their requests see the cancel flag).
  void JoinAll();

 private:
  struct Job {
    int experiment_id = 0;
    ProposalRequest request;
    std::vector<Experiment> history, in_flight;
    std::thread thread;
  };
  void Run(Job* job);

  Proposer* proposer_;
  StepRunner* wake_;
  Clock* clock_;
  mutable std::mutex mu_;
  std::list<std::unique_ptr<Job>> jobs_;  // threaded, running or done but not joined
  std::vector<Done> finished_;
  size_t running_ = 0;
};

}  // namespace ratchet
