// One experiment, from its proposal to its decision, as a state machine the
// engine advances with events: the proposal came back, a step finished.
// Each stage starts the steps it needs through the engine and returns; no
// stage waits. Every phase change is written to the ledger before the side
// effect that follows it, so a crash anywhere is recovered from the ledger
// (Engine::Recover).
//
//   Start ─ baseline ───────────────────────────────┐
//     └── proposal ─> scan the working copy ─> commit┤ (no_change, out_of_scope,
//                                                    │  rejected, propose_failed)
//   Build (a fresh copy of exactly the commit) ─> before gates ─> [preflight:
//   a smoke run at a short budget, candidates only] ─> runs:
//     run ─> [verify + serve] ─> the next run (baseline repeats), then after
//     gates ─> judge ─> confirm runs ─> judge ─> decided ─> settled (done)
//
// A winner whose incumbent moved while it ran (other workers) is rebased onto
// the current incumbent, or re-applied (search parameters), or run again
// ([run] moved = "rerun").
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/accept.h"
#include "core/experiment.h"
#include "core/proposer.h"
#include "core/prune.h"
#include "core/repo.h"
#include "core/runner.h"
#include "core/step_specs.h"

namespace ratchet {

class Engine;

/// Where an experiment recovered unfinished takes up a step of the earlier
/// session that outlived it on the executor (a cluster job still queued or
/// running, or finished with its result kept): the steps before it had
/// passed, and that step is followed instead of started again.
struct ResumePoint {
  enum class Step { kBuild, kGate, kPreflight, kRun, kAfterGate, kConfirm };
  Step step = Step::kRun;
  size_t gate = 0;   // kGate, kAfterGate: its place among the before or after gates
  std::string name;  // the step's name (its log): "build", "gate-lint", "preflight", "run-2"
  std::string what;  // for the user: "build", "gate lint", "preflight", "run", "confirm run"
  bool rerun = false;  // kBuild, kGate, kRun: of a winner run again on its moved incumbent
};

class ExperimentFlow {
 public:
  /// `exp` has its row in the ledger already (id, parent, phase proposing).
  ExperimentFlow(Engine* engine, Experiment exp);

  /// Before Start: this experiment runs experiment `id`'s change again, in
  /// full, on its own incumbent (`ratchet rerun`), instead of a proposal.
  void RerunOf(int id) { rerun_of_ = id; }
  /// The first stage: the working copy; then the build (baseline), a
  /// proposal (wants_proposal()), or the rerun's change. False only when
  /// the engine cannot go on.
  bool Start(std::string* err);
  /// The step of `exp` (unfinished, with `runs` recorded) that it can take
  /// up again when `on_executor(name)` says that step is still there: the
  /// build or a before gate without `serve` (phase building, nothing run
  /// yet), the preflight, a first run (or a baseline repeat), an after gate
  /// without `serve`, or a confirm run; or, for a winner run again on its
  /// moved incumbent ([run] moved = "rerun"), the build, a before gate or a
  /// run of that. nullopt when the experiment cannot be resumed.
  static std::optional<ResumePoint> FindResume(
      const LoopConfig& config, const Experiment& exp, const std::vector<RunRecord>& runs,
      const std::function<bool(const std::string& name)>& on_executor);
  /// Instead of Start, for an experiment recovered with a ResumePoint:
  /// takes that step up again where the earlier session left it, after
  /// `runs` (what it had recorded).
  bool Reattach(const ResumePoint& at, const std::vector<RunRecord>& runs, std::string* err);
  /// The step name of run `attempt` (1-based): "run", "run-2", ...
  static std::string RunName(int attempt);
  /// The proposer's answer (for the request the engine made).
  bool OnProposal(const Proposal& proposal, double seconds, std::string* err);
  /// A step of this flow finished.
  bool OnStep(StepRunner::StepId id, const RunResult& result, std::string* err);
  /// The user asked to stop now: steps are being cancelled; a flow waiting
  /// for nothing (its proposal) is finished as interrupted at once.
  bool Interrupt(std::string* err);
  /// One of this flow's steps changed ratchet's own state (`what`, put back
  /// already): the experiment ends out of scope, its other steps cancelled.
  bool StateChanged(const std::string& what, std::string* err) {
    return Finish(Status::kOutOfScope, what, err);
  }
  /// A warning for this experiment's row.
  void Warn(const std::string& line) { exp_.warnings.push_back(line); }

  bool wants_proposal() const { return stage_ == Stage::kWantProposal; }
  void proposal_started() { stage_ = Stage::kProposing; }
  bool done() const { return stage_ == Stage::kDone; }
  const Experiment& exp() const { return exp_; }
  const ExperimentPaths& paths() const { return paths_; }

 private:
  enum class Stage {
    kWantProposal,
    kProposing,
    kBuild,
    kGate,       // gates_[gate_], before or after the runs
    kPreflight,  // the command at [run] preflight's budget (attempt 0)
    kRun,        // the command, attempt runs_.size() + 1
    kVerify,     // [verify] and its serve partner, of that attempt
    kDone,
  };

  // Stages.
  /// The change of experiment rerun_of_ applied to this one's parent, in
  /// the working copy, as a proposal (kFailed when it cannot be).
  bool RerunProposal(Proposal* proposal, std::string* err);
  bool Commit(const CopyScan& scan, std::string* err);
  bool AfterCommit(std::string* err);
  bool Build(std::string* err);
  /// The build step (or the first gate when there is none), in phase building.
  bool StartBuild(std::string* err);
  bool NextGate(std::string* err);
  bool StartPreflight(std::string* err);
  /// The preflight's verdict: "" when it passed, else why it failed.
  std::string PreflightFailure(const RunResult& r) const;
  bool StartAttempt(const std::string& purpose, std::string* err);
  /// The state once the first runs are recorded: the after gates are next
  /// (gate_order_ holds them; gate_ is the caller's).
  void AfterTheFirstRuns();
  bool AttemptMeasured(std::string* err);
  bool Judge(std::string* err);
  bool Conclude(bool keep, const std::string& reason, std::string* err);
  bool Finish(Status status, const std::string& reason, std::string* err);

  // Helpers.
  bool Enter(Phase phase, std::string* err);
  void StartGate(std::string* err);
  StepRequest Request(StepKind kind, const std::string& name, const std::string& command,
                      double timeout_s) const;
  RunSpec Spec(StepKind kind, const std::string& name, const std::string& command,
               double timeout_s) const;
  /// The step's failure in one line, "" when it passed.
  std::string StepFailure(const RunResult& r, const std::string& name) const;
  void MeasureRun(const RunResult& r);
  /// A line of the running command: progress for the reporter, a point of
  /// the curve, and maybe the pruning rule's verdict (which cancels the run).
  void OnRunLine(std::string_view line, double started);
  bool MeasureVerify(std::string* problem, Status* status);
  /// Starts a trusted command with `count` model servers; the ids go into
  /// *trusted_id and serve_steps_.
  void StartJudged(const RunSpec& trusted, const std::string& serve_name,
                   const std::string& serve_command, double timeout_s, int count,
                   StepRunner::StepId* trusted_id);
  /// Records a server's result; true when `id` was one of them.
  bool TakeServeResult(StepRunner::StepId id, const RunResult& result);
  /// "; the model server exit 3 (log: ...)" for the first server that failed.
  std::string ServeFailure(const std::string& name) const;
  /// The means over the runs that decide (the selection run, or the confirm
  /// runs alone), into exp_.
  Spread Summarize(bool confirmed);
  std::string MovedIncumbent(std::string* err);

  Engine* engine_;
  Experiment exp_;
  ExperimentPaths paths_;
  Stage stage_ = Stage::kWantProposal;

  // The gates in order: before ones, then (after the first runs) after ones.
  std::vector<size_t> gate_order_;
  size_t gate_ = 0;
  bool after_gates_done_ = false;
  StepRunner::StepId gate_step_ = 0;
  std::optional<RunResult> gate_result_;

  // Runs: one RunRecord per attempt, in order.
  std::vector<RunRecord> runs_;
  RunRecord current_;
  RunResult run_result_;
  StepRunner::StepId run_step_ = 0, verify_step_ = 0;
  std::optional<RunResult> verify_result_;
  // The model servers of the verifier or of a gate with `serve`.
  std::vector<StepRunner::StepId> serve_steps_;
  std::vector<std::optional<RunResult>> serve_results_;
  int first_runs_ = 1;   // before the decision: 1, or baseline_repeats
  int confirm_from_ = 0; // index in runs_ of the first confirm run (0: none yet)
  bool confirming_ = false;
  bool rerun_ = false;   // running again on a moved incumbent
  int rerun_from_ = 0;
  std::set<StepRunner::StepId> pending_;
  int rerun_of_ = 0;  // `ratchet rerun`: the experiment whose change this runs in full
  bool preflight_done_ = false;
  std::string preflight_nan_;       // "loss=nan at 3s": the preflight was stopped for it
  std::unique_ptr<Pruner> pruner_;  // the main run's, when [prune] is on
  bool prune_requested_ = false;    // the pruner cancelled the run
  // The next attempt takes up a run of an earlier session: its log so far is
  // replayed at once, so its curve's clock is wrong and it is not pruned.
  bool reattaching_ = false;
};

}  // namespace ratchet
