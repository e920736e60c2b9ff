// The inner loop's session: loads the ledger and checks it, recovers what a
// crash left unfinished, prepares the trusted outputs, then keeps up to
// [run] workers experiments in flight (each an ExperimentFlow, see
// experiment_flow.h) until a stop rule fires, and settles each decision in
// the order they come. Every transition is written to the ledger before the
// side effect that follows it. All side effects go through the ports
// (Repo, StepRunner, Workspace, Ledger, Clock), so this is tested with
// fakes; src/cli/cmd_run.cc wires the real ones.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/accept.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/experiment.h"
#include "core/experiment_flow.h"
#include "core/hooks.h"
#include "core/ledger.h"
#include "core/proposer.h"
#include "core/prune.h"
#include "core/repo.h"
#include "core/reporter.h"
#include "core/runner.h"
#include "core/steering.h"
#include "core/step_specs.h"
#include "core/workspace.h"

namespace ratchet {

class ExperimentFlow;
class ProposalPool;

struct EngineDeps {
  Clock* clock = nullptr;
  StepRunner* steps = nullptr;
  Repo* repo = nullptr;
  Workspace* workspace = nullptr;
  Ledger* ledger = nullptr;
  Proposer* proposer = nullptr;
  HookSet* hooks = nullptr;          // may be null: no mechanisms
  OuterController* outer = nullptr;  // may be null: no outer loop
  Reporter* reporter = nullptr;      // may be null
  Steering* steering = nullptr;      // may be null: `ratchet note` / `pause`
  /// Ctrl-C presses: 1 = stop after the experiments in flight, 2 = stop now.
  const std::atomic<int>* interrupts = nullptr;
  /// Set together with the second Ctrl-C: kill the steps in flight now.
  const std::atomic<bool>* cancel = nullptr;
  long long pid = 0;  // recorded with the session
  /// Whether the runner can sandbox (ProcessRunner::SandboxAvailable), and
  /// why not; the user's $HOME (for ~/ in [sandbox] paths).
  bool sandbox_available = false;
  std::string sandbox_why;
  std::string home;
};

/// Why a session ended; `ratchet run` turns it into its exit status.
enum class StopKind {
  kTarget,          // stop.target reached
  kRule,            // another stop rule: max_experiments, wall, patience, cost, tokens
  kCircuitBreaker,  // stop.consecutive_failures, or the loop cannot usefully go on
  kBaselineFailed,  // the unchanged baseline did not produce a result
  kInterrupted,     // Ctrl-C
};

struct StopSummary {
  std::string reason;
  StopKind kind = StopKind::kRule;
  std::optional<Experiment> best;
  std::map<Status, int> counts;
  int experiments = 0;
};

class Engine {
 public:
  Engine(const LoopConfig& config, const EngineDeps& deps);
  ~Engine();

  /// Checks a loop before anything is written: the ledger is what ratchet
  /// wrote, the working tree is clean unless the ledger holds an unfinished
  /// experiment, the branch is where the ledger says, and the sandbox works
  /// (or the loop opted out).
  bool Preflight(std::string* err);

  /// Starts a session: recovers unfinished experiments, prepares, then runs
  /// experiments until a stop rule fires. False only when the loop cannot go
  /// on (git or ledger failure); the reason is in *err.
  bool Run(StopSummary* summary, std::string* err);

 private:
  friend class ExperimentFlow;

  // The session.
  bool Load(std::string* err);
  bool CheckLedger(std::string* err);
  bool CheckBranch(std::string* err);
  bool Recover(std::string* err);
  bool RecoverOne(Experiment exp, std::string* err);
  /// The step of an unfinished experiment that outlived ratchet on the
  /// executor (a cluster job), where the experiment can take it up again
  /// (ExperimentFlow::FindResume); nullopt when there is none.
  std::optional<ResumePoint> FindResume(const Experiment& exp,
                                        const std::vector<RunRecord>& runs) const;
  /// The recovered experiments whose steps are reattached, back in flight.
  bool Reattach(std::string* err);
  bool StartLoop(std::string* err);
  bool Prepare(std::string* err);
  bool StartExperiment(std::string* err);
  bool ServeProposals(std::string* err);
  bool Dispatch(StepRunner::StepId id, const RunResult& result, std::string* err);
  bool Retire(ExperimentFlow* flow, std::string* err);
  /// A step left `changes` in ratchet's git state (put back already): the
  /// experiment that ran it is out of scope when it is the only one that
  /// could have; otherwise each one's row says so.
  bool OwnedStateChanged(int experiment_id, const std::vector<std::string>& changes,
                         std::string* err);
  void CancelAll();
  std::string CheckStopRules(StopKind* kind) const;

  // Services for the flows.
  StepRunner::StepId StartStep(ExperimentFlow* flow, const RunSpec& spec);
  void MakeHome(const std::string& home);
  void StartConnected(ExperimentFlow* flow, const RunSpec& verifier,
                      const std::vector<RunSpec>& servers, StepRunner::StepId* verifier_id,
                      std::vector<StepRunner::StepId>* server_ids);
  /// The incumbent now (the last keep), null before the baseline is kept.
  const Experiment* Incumbent() const;
  std::string IncumbentCommit() const;
  Noise CurrentNoise() const;
  /// "" when the loop directory's protected files and prepared outputs
  /// still hash as recorded; else what changed.
  bool CheckTrusted(std::string* problem, std::string* err);
  /// Moves the branch to a kept commit (compare-and-swap from the incumbent).
  bool AdvanceTo(const Experiment& exp, std::string* err);
  /// A finished experiment joins the history; hooks, outer loop, notes.
  bool Record(const Experiment& exp, std::string* err);
  void AddNoiseGroup(const std::vector<double>& values);
  /// Keeps what pruning compares later runs with: the first run's curve of
  /// an experiment that ran its whole budget, and groups of repeated runs.
  void RememberCurves(const Experiment& exp, const std::vector<RunRecord>& runs);
  /// The reference of a pruning decision now (pointers into this engine,
  /// valid until the next experiment finishes).
  PruneReference PruneReferenceNow() const;
  /// The loop as mechanisms see it; next_id is `proposing_id` when given
  /// (the experiment a proposal is for), else the next id to be assigned.
  LoopView View(int proposing_id = 0) const;
  double ElapsedWall() const;
  bool CancelRequested() const;
  void Note(const std::string& line);
  void AppendNotes(const Experiment& exp, const Experiment* before);
  bool Write(const Experiment& exp, std::string* err);
  ProposalRequest MakeRequest(ExperimentFlow* flow);

  LoopConfig config_;
  EngineDeps deps_;
  std::string branch_;
  std::string start_commit_;  // HEAD when the loop began (parent of the baseline)
  std::vector<Experiment> history_;  // finished experiments, by id
  int incumbent_id_ = 0;             // 0 before the baseline is kept
  std::map<int, std::unique_ptr<ExperimentFlow>> flows_;  // in flight, by id
  // Recovered experiments with a step still on the executor, the runs they
  // had recorded, and that step: they go back in flight when the session
  // begins.
  struct Reattachment {
    Experiment exp;
    std::vector<RunRecord> runs;
    ResumePoint at;
  };
  std::vector<Reattachment> reattach_;
  std::map<StepRunner::StepId, int> step_owner_;          // step -> experiment id
  std::unique_ptr<ProposalPool> proposals_;
  std::vector<std::vector<double>> noise_groups_;
  std::map<int, Curve> full_curves_;               // by experiment id
  std::vector<std::vector<Curve>> repeat_curves_;  // runs of one commit each
  std::map<std::string, std::string> protected_hashes_;
  std::map<std::string, std::string> prepared_hashes_;
  SandboxPlan sandbox_;
  int session_id_ = 0;
  double session_started_mono_ = 0;
  double earlier_sessions_s_ = 0;
  bool loaded_ = false;
  std::string stop_reason_;  // set when the loop cannot usefully go on
  StopKind stop_kind_ = StopKind::kCircuitBreaker;
  std::unique_ptr<EventSink> events_;
};

}  // namespace ratchet
