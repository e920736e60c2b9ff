// The proposer interface: every way of changing the code (built-in search,
// coding agent, external script) sits behind it. A proposer edits files in
// the loop's working tree and describes what it did. It never commits and
// never touches the ledger: the engine checks scope, commits, runs, decides.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"
#include "core/runner.h"
#include "core/state_guard.h"

namespace ratchet {

class ProcessRunner;
class Workspace;
class Clock;
class SearchSpace;

/// What the engine tells a proposer before each experiment.
struct ProposalRequest {
  int experiment_id = 0;
  /// The experiment's working copy (absolute): the incumbent's files and
  /// nothing else (no .git). Edit files here.
  std::string worktree;
  std::string run_dir;   // .ratchet/runs/<id>/ (absolute) for the proposer's logs
  const LoopConfig* config = nullptr;
  /// Every experiment so far, oldest first (finished ones: phase kDone).
  const std::vector<Experiment>* history = nullptr;
  /// Experiments in flight on other workers (description, params; no
  /// result yet), so a proposer does not propose the same thing again.
  const std::vector<Experiment>* in_flight = nullptr;
  /// The current best (the last kept experiment); null before the baseline.
  const Experiment* incumbent = nullptr;
  /// Guidance lines from outer-loop mechanisms (text for agents).
  std::vector<std::string> guidance;
  /// Constraints or a region for a search proposer, as a JSON object from
  /// outer-loop mechanisms; "" when none. See src/outer/ for the keys.
  std::string search_hints_json;
  uint64_t seed = 0;  // derived from [loop] seed and the experiment id
  const std::atomic<bool>* cancel = nullptr;  // set when the user asks to stop now
  /// The view the proposer's processes get, filled by the engine: the
  /// experiment's working copy writable, a scratch $HOME for this experiment,
  /// the network only where the loop allows it. A proposer that runs commands
  /// copies it into RunSpec::sandbox; when sandbox.enabled is false (the loop
  /// opted out) it still sets HOME to sandbox.home if that is not empty.
  SandboxSpec sandbox;
};

struct Proposal {
  enum class Outcome {
    kCandidate,  // the tree was edited; description says how
    kNoChange,   // the proposer chose to change nothing
    kFailed,     // the proposer failed; reason says why
  };
  Outcome outcome = Outcome::kFailed;
  std::string description;  // one line
  std::string hypothesis;   // optional
  std::string params_json;  // parameter values (search), "" if none
  std::string reason;       // for kFailed / kNoChange
  Usage usage;              // tokens and cost, when the proposer reports them
  /// With kFailed: the loop cannot safely go on (e.g. an agent replaced the
  /// ledger file ratchet writes to); the engine records this experiment and
  /// stops with `reason`.
  bool stop_loop = false;
  /// Whatever the outcome: facts the user should see that do not fail the
  /// proposal, one line each, e.g. "the agent printed no usage report, so
  /// its spend is not counted towards stop.cost_usd: ...". (For the ledger
  /// and `ratchet status`; agent.json has them too.)
  std::vector<std::string> warnings;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  /// The kind, as written in [propose] kind ("script", "search", ...).
  virtual std::string kind() const = 0;
  /// Edits the working tree (which is at the incumbent) to make a candidate.
  virtual Proposal Propose(const ProposalRequest& request) = 0;
  /// True when Propose may run on several threads at once, each for its own
  /// request (a proposer that only starts a process). False: the engine calls
  /// it on its own thread, one at a time (fast, in-process proposers).
  virtual bool concurrent() const { return false; }
  /// The space of a proposer that searches over named values (the built-in
  /// search), for the outer loop's mechanisms; null for others.
  virtual const SearchSpace* search_space() const { return nullptr; }
  virtual uint64_t search_seed() const { return 0; }
  /// Writes `params_json` into the tree in place of the current candidate
  /// (an outer-loop mechanism rewrote the proposal). Proposers without
  /// parameters return false and the rewrite is refused.
  virtual bool Reapply(const ProposalRequest& request, const std::string& params_json,
                       std::string* err) {
    (void)request, (void)params_json;
    *err = "this proposer has no parameters to rewrite";
    return false;
  }
};

/// What a proposer may use to act on the world.
struct ProposerDeps {
  ProcessRunner* runner = nullptr;
  Workspace* workspace = nullptr;
  Clock* clock = nullptr;
  // A guard per run of an external program (an agent, a script), kept from
  // writing ratchet's own state; those proposers refuse to start without it.
  StateGuardFactory state_guards;
};

}  // namespace ratchet
