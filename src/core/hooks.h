// Outer-loop hook points. A mechanism attaches to some of four points in the
// engine; the engine calls every active mechanism at each point, counts every
// call (recorded in the ledger, shown by `ratchet status`) and records which
// mechanisms touched each experiment.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"
#include "core/runner.h"

namespace ratchet {

enum class Hook { kBeforePropose, kOnCandidate, kOnResult, kAccept };
const char* HookName(Hook hook);  // "before_propose", "on_candidate", ...

/// Read-only view of the loop given to mechanisms.
struct LoopView {
  const LoopConfig* config = nullptr;
  const std::vector<Experiment>* history = nullptr;  // finished experiments
  const Experiment* incumbent = nullptr;
  int next_id = 0;
};

/// Added by before_propose: text for an agent, hints for a search.
struct Guidance {
  std::vector<std::string> text;
  /// JSON object merged key by key into the proposer's search hints.
  std::string search_hints_json;
};

struct CandidateView {
  int experiment_id = 0;
  std::string description;
  std::string params_json;
  std::vector<std::string> files_changed;
  std::string diff;  // unified diff against the incumbent
  std::string candidate_commit;
  /// The candidate's working copy (absolute) and the view a mechanism that
  /// runs a command (a reviewer) gives it: the copy read-only.
  std::string worktree;
  SandboxSpec sandbox;
};

struct CandidateVerdict {
  bool veto = false;       // reject: status `rejected`, not run
  std::string reason;
  std::string rewritten_params_json;  // non-empty: the proposer re-applies these
  Usage usage;  // tokens and cost the mechanism spent (an LLM reviewer), added to the experiment's
};

struct AcceptVerdict {
  bool decided = false;  // false: the default rule decides
  bool keep = false;
  std::string reason;
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  virtual std::string name() const = 0;
  /// Which hooks this mechanism implements; only those are called and counted.
  virtual std::vector<Hook> hooks() const = 0;

  virtual void BeforePropose(const LoopView& view, Guidance* guidance) {
    (void)view, (void)guidance;
  }
  virtual CandidateVerdict OnCandidate(const LoopView& view, const CandidateView& candidate) {
    (void)view, (void)candidate;
    return {};
  }
  virtual void OnResult(const LoopView& view, const Experiment& result) {
    (void)view, (void)result;
  }
  /// `candidate` has its metrics; `incumbent` is the current best.
  virtual AcceptVerdict Accept(const LoopView& view, const Experiment& candidate,
                               const Experiment& incumbent) {
    (void)view, (void)candidate, (void)incumbent;
    return {};
  }
};

/// Watches the loop after every experiment and may switch mechanisms on and
/// off (the outer loop of src/outer/). Decisions go to the ledger as events.
class EventSink;
class HookSet;
class OuterController {
 public:
  virtual ~OuterController() = default;
  virtual void AfterExperiment(const LoopView& view, HookSet* hooks, EventSink* events) = 0;
};

/// Where parts outside the engine record facts (ledger events).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Record(int experiment_id, const std::string& kind,
                      const std::string& detail_json) = 0;
};

/// The active mechanisms, called in order, with call counts.
class HookSet {
 public:
  void Add(std::shared_ptr<Mechanism> mechanism);
  /// Removes by name; false if not present.
  bool Remove(const std::string& name);
  std::vector<std::string> Names() const;

  Guidance BeforePropose(const LoopView& view);
  /// The first veto wins; otherwise the last rewrite wins.
  CandidateVerdict OnCandidate(const LoopView& view, const CandidateView& candidate);
  void OnResult(const LoopView& view, const Experiment& result);
  /// The first mechanism that decides wins.
  AcceptVerdict Accept(const LoopView& view, const Experiment& candidate,
                       const Experiment& incumbent);

  /// Calls made since the last TakeCounts(), by (mechanism, hook name).
  std::map<std::pair<std::string, std::string>, long long> TakeCounts();
  /// Mechanisms called since the last TakeTouched() (for the experiment row).
  std::vector<std::string> TakeTouched();

 private:
  bool Implements(const Mechanism& m, Hook hook) const;
  void Count(const Mechanism& m, Hook hook);
  std::vector<std::shared_ptr<Mechanism>> mechanisms_;
  std::map<std::pair<std::string, std::string>, long long> counts_;
  std::vector<std::string> touched_;
};

}  // namespace ratchet
