// The Slurm executor: a StepRunner that submits every batch step (RunSpec::
// batch: build, gates, runs) as a Slurm job and runs the rest (proposers'
// helpers, the verifier and its model servers) with a LocalStepRunner.
//
// A job is one trusted `ratchet exec-step SPEC RESULT` on the node: the
// local runner there (sandbox, cgroup, deadline, all of it) runs the step
// from the spec this side wrote and writes its RunResult back. Both files
// live in <state>/<n>/ under the loop's .ratchet, which no step can see, so
// the candidate cannot write its own result. The loop directory must be on
// a file system the nodes share (it is on a one-machine cluster).
//
// Following a job costs one `squeue` every poll interval for all jobs at
// once; between polls this side tails each step's log for its on_line
// callback (progress, pruning) and waits on the local steps. Deadlines are
// enforced three times: by the node's runner, by `--time`, and here (a job
// running past timeout + grace + a margin is cancelled and reported as
// timed out, whatever the node says). Cancel and the destructor `scancel`.
//
// Jobs of an earlier session (ratchet killed with jobs running) are found
// from their folders at construction. A job of a step that is still running,
// or that finished with its result file written, can be reattached: the
// engine resumes its experiment at that step (CanReattach; which steps it
// takes up is ExperimentFlow::FindResume's rule), and Start with a spec of
// the same log path follows the job instead of submitting another.
// EndLeftovers then cancels the rest (anything not resumed) and waits until
// they are gone, so that no job of theirs keeps a slot.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/runner.h"

namespace ratchet {

struct SlurmOptions {
  std::string state_dir;               // <loop>/.ratchet/slurm: one folder per job
  std::vector<std::string> sbatch;     // options for every job ([executor] sbatch)
  double poll_s = 0.25;                // between squeue calls
  std::string ratchet_exe;             // what the job runs; "": this program
};

class SlurmStepRunner : public StepRunner {
 public:
  /// `local` runs the steps that are not batch steps, and is owned.
  SlurmStepRunner(SlurmOptions options, std::unique_ptr<StepRunner> local);
  /// Jobs still running are cancelled.
  ~SlurmStepRunner() override;
  SlurmStepRunner(const SlurmStepRunner&) = delete;
  SlurmStepRunner& operator=(const SlurmStepRunner&) = delete;

  /// A batch step is submitted with sbatch (a failed submission is reported
  /// by Wait as kFailedToStart with sbatch's message); others go local.
  StepId Start(const RunSpec& spec) override;
  void StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                      StepId* verifier_id, std::vector<StepId>* server_ids) override;
  bool Wait(double max_wait_s, StepId* id, RunResult* result) override;
  void Cancel(StepId id) override;
  void Wake() override;
  size_t Running() const override;
  bool CanReattach(const std::string& log_path) const override;
  std::vector<std::string> EndLeftovers() override;

  /// Whether sbatch and squeue answer (a cluster is reachable); *why when not.
  static bool ClusterReachable(std::string* why);

 private:
  struct Job;
  // One squeue for every job; finished ones move to finished_.
  void Poll();
  // New complete lines of a job's log, to its on_line.
  void Tail(Job& job);
  // A finished job's result: the node's result file, or what Slurm's final
  // state says when there is none.
  RunResult Collect(Job& job, const std::string& state);
  // The earlier session's job folders, into leftovers_.
  void FindLeftovers();
  struct Leftover {
    std::string dir;
    std::string job_id;
    bool live = false;          // queued or running when this session began
    bool reattachable = false;  // live, or finished with its result file
  };

  SlurmOptions options_;
  std::unique_ptr<StepRunner> local_;
  std::map<StepId, std::unique_ptr<Job>> jobs_;
  std::deque<std::pair<StepId, RunResult>> finished_;
  std::map<std::string, Leftover> leftovers_;  // by the log path of their spec
  std::atomic<bool> woken_{false};
  std::chrono::steady_clock::time_point next_poll_;
  StepId next_id_ = StepId{1} << 40;  // apart from the local runner's ids
  uint64_t next_folder_ = 1;
};

}  // namespace ratchet
