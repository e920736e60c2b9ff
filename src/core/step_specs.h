// How each step of an experiment is run: its command, directory,
// environment, deadline, limits and, for the sandbox, exactly what it may see.
// One builder for every step, so that build, gates, runs, the verifier and
// the candidate's model server cannot drift apart. Pure.
//
// Views (core/runner.h SandboxSpec):
//   untrusted in the working copy (propose, build, gates without `serve`,
//   run): the copy writable, the protected files in it read-only, [run] sees
//   (prepared data of the loop directory) read-only at the same place, the
//   artifact folder writable for the run, a scratch $HOME.
//   serve (the candidate's model code answering a verifier): the copy and the
//   artifact folder read-only, nothing else, never the network.
//   trusted (verify, gates with `serve`): the loop directory read-only with
//   .git and .ratchet hidden, the artifact folder read-only.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"
#include "core/runner.h"

namespace ratchet {

/// Where one experiment's things are (absolute paths).
struct ExperimentPaths {
  std::string loop;     // the loop directory
  std::string copy;     // its working copy: <loop>/.ratchet/work/<id>
  std::string run_dir;  // logs, written by ratchet: <loop>/.ratchet/runs/<id>
  /// RATCHET_RUN_DIR of attempt n: <run_dir>/out (n = 1) or out-<n>, and
  /// <run_dir>/preflight for the preflight (attempt 0).
  std::string Artifacts(int attempt) const;
  /// The scratch $HOME of one step: <run_dir>/home/<step>.
  std::string Home(const std::string& step) const;
  /// The log of one step: <run_dir>/<step>.log (what a batch executor's
  /// CanReattach is asked about, too).
  std::string Log(const std::string& step) const;
};
ExperimentPaths PathsOf(const std::string& loop, int experiment_id);

enum class StepKind {
  kPropose,      // the proposer's processes (scripts, agents)
  kBuild,        // [run] build
  kGate,         // a gate without `serve`
  kRun,          // [run] command
  kServe,        // the candidate's side of a verifier or of a gate with `serve`
  kTrusted,      // [verify] command, or a gate's command that has `serve`
};

struct StepRequest {
  StepKind kind = StepKind::kRun;
  std::string name;     // "build", "gate-gradcheck", "run", "verify", ... (log and home names)
  std::string command;  // shell command line
  double timeout_s = 0;
  int attempt = 1;          // 0: the preflight
  double budget_s = -1;     // RATCHET_BUDGET_SECONDS when >= 0 (the preflight's)
  std::string purpose;  // for the environment: "main", "confirm", ...
  int worker = 0;
  std::string split = "val";  // RATCHET_VERIFY_SPLIT of trusted steps
  int servers = 1;            // model servers a trusted step talks to (fds 3/4, 5/6)
};

/// What the sandbox is for this loop on this machine.
struct SandboxPlan {
  bool use = false;  // false: plain processes (opted out, or not available and not required)
  /// Protected files of the working copy (relative), bound read-only.
  std::vector<std::string> protected_paths;
  std::string home;  // the user's real $HOME, for ~/ in [sandbox] readable/writable
};

/// The environment every step of an experiment gets: RATCHET_BUDGET_SECONDS,
/// RATCHET_EXPERIMENT, RATCHET_SEED, RATCHET_ATTEMPT, RATCHET_RUN_DIR, the
/// worker's slot, then [run] env.
std::vector<std::pair<std::string, std::string>> StepEnv(const LoopConfig& config,
                                                         const Experiment& exp,
                                                         const ExperimentPaths& paths,
                                                         const StepRequest& step);

/// The RunSpec of one step.
RunSpec StepSpec(const LoopConfig& config, const Experiment& exp, const ExperimentPaths& paths,
                 const StepRequest& step, const SandboxPlan& plan);

/// The sandbox a proposer's processes get (ProposalRequest::sandbox).
/// The view of an outer-loop process that works in one folder (the agent
/// that writes a mechanism, the mechanism itself): the loop directory and
/// the user's home hidden, then `dir` bound as `kind` (the loop's .git and
/// .ratchet hidden again when `dir` is the loop directory), then [sandbox]
/// readable and writable. No network; $HOME an empty tmpfs.
SandboxSpec FolderSandbox(const LoopConfig& config, const std::string& loop,
                          const std::string& user_home, const std::string& dir, Mount::Kind kind);

SandboxSpec ProposerSandbox(const LoopConfig& config, const ExperimentPaths& paths,
                            const SandboxPlan& plan);

/// The seed of one run: the loop seed for the first attempt, so experiments
/// are compared on equal terms, and a different one for each repeat, so the
/// repeats measure seed noise too.
uint64_t RunSeed(uint64_t loop_seed, int attempt);

}  // namespace ratchet
