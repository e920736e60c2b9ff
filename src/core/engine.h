// The inner loop: propose, commit, build, run, verify, decide, keep or
// revert; one experiment at a time, every transition written to the ledger
// before the side effect that follows it. All side effects go through the
// ports (Repo, ProcessRunner, Workspace, Ledger, Clock), so this is tested
// with fakes; src/cli/cmd_run.cc wires the real ones.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/config.h"
#include "core/experiment.h"
#include "core/hooks.h"
#include "core/ledger.h"
#include "core/proposer.h"
#include "core/repo.h"
#include "core/reporter.h"
#include "core/runner.h"
#include "core/steering.h"
#include "core/workspace.h"

namespace ratchet {

struct EngineDeps {
  Clock* clock = nullptr;
  ProcessRunner* runner = nullptr;
  Repo* repo = nullptr;
  Workspace* workspace = nullptr;
  Ledger* ledger = nullptr;
  Proposer* proposer = nullptr;
  HookSet* hooks = nullptr;           // may be null: no mechanisms
  OuterController* outer = nullptr;   // may be null: no outer loop
  Reporter* reporter = nullptr;       // may be null
  Steering* steering = nullptr;       // steering: may be null (ratchet note / pause)
  /// Ctrl-C presses: 1 = stop after this experiment, 2 = stop now.
  const std::atomic<int>* interrupts = nullptr;
  /// Set together with the second Ctrl-C: kill the current run now.
  const std::atomic<bool>* cancel = nullptr;
  long long pid = 0;  // recorded with the session
};

struct StopSummary {
  std::string reason;
  std::optional<Experiment> best;
  std::map<Status, int> counts;
  int experiments = 0;
};

class Engine {
 public:
  Engine(const LoopConfig& config, const EngineDeps& deps);

  /// Checks a loop before anything is written: the working tree is clean
  /// unless the ledger holds an unfinished experiment, and the branch is
  /// where the ledger says.
  bool Preflight(std::string* err);

  /// Starts a session: recovers an unfinished experiment, then runs
  /// experiments until a stop rule fires. False only when the loop cannot go
  /// on (git or ledger failure); the reason is in *err.
  bool Run(StopSummary* summary, std::string* err);

 private:
  bool Load(std::string* err);
  /// The loop branch is where the ledger says (or explained by a crash).
  bool CheckBranch(bool pending, std::string* err);
  bool Recover(std::string* err);
  bool StartLoop(std::string* err);
  bool RunOne(EventSink* events, std::string* err);

  // The steps of one experiment. Each returns false only when the engine
  // cannot go on (git or ledger failure); the experiment's fate goes into
  // *exp, and *finished says whether it is over.
  bool Propose(Experiment* exp, bool* finished, std::string* err);
  bool CommitCandidate(Experiment* exp, const std::vector<FileChange>& changes,
                       std::string* err);
  bool BuildAndGate(Experiment* exp, bool* finished, std::string* err);
  bool RunAndDecide(Experiment* exp, std::string* err);
  /// One run of the command. *status is kNone when it produced a usable
  /// metric, else the failure status with *problem saying what was seen.
  bool RunAttempt(Experiment* exp, int attempt, const std::string& purpose, RunRecord* record,
                  std::string* problem, Status* status, std::string* err);
  /// Runs the build or a gate; "" when it passed, else what went wrong.
  std::string RunStep(const Experiment& exp, const std::string& command, double timeout_s,
                      const std::string& log_name, double* seconds);
  /// Hashes the protected files; *problem is "" when they match the ledger.
  bool CheckProtected(std::string* problem, std::string* err);
  /// Records the decision (write-ahead), then settles it.
  bool Finish(Experiment* exp, Status status, const std::string& reason, std::string* err);
  /// The side effect of a decision: advance the branch on keep, else restore
  /// the tree to the parent; then phase kDone. Idempotent (used by recovery).
  bool Settle(Experiment* exp, std::string* err);
  bool Write(const Experiment& exp, std::string* err);
  bool Enter(Experiment* exp, Phase phase, std::string* err);

  std::string IncumbentCommit() const;
  const Experiment* Incumbent() const;
  std::string RunDir(int id, bool absolute) const;
  std::vector<std::pair<std::string, std::string>> RunEnv(const Experiment& exp,
                                                          int attempt) const;
  LoopView View() const;
  double ElapsedWall() const;
  bool Interrupted() const;
  bool CancelRequested() const;
  void Note(const std::string& line);
  void AppendNotes(const Experiment& exp, const Experiment* before);

  LoopConfig config_;
  EngineDeps deps_;
  std::string branch_;
  std::string start_commit_;  // HEAD when the loop began (parent of the baseline)
  std::vector<Experiment> history_;
  std::map<std::string, std::string> protected_hashes_;
  std::optional<double> noise_sigma_;
  int session_id_ = 0;
  double session_started_mono_ = 0;
  double earlier_sessions_s_ = 0;
  bool loaded_ = false;
  std::string stop_reason_;      // set when the loop cannot usefully go on
  EventSink* events_ = nullptr;  // ledger events of the running session
};

/// The seed of one run: the loop seed for the first attempt, so experiments
/// are compared on equal terms, and a different one for each repeat, so the
/// repeats measure seed noise too.
uint64_t RunSeed(uint64_t loop_seed, int attempt);

}  // namespace ratchet
