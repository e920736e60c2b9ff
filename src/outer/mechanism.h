// The base of every outer-loop mechanism (built-in and external). It keeps
// what level 2 judges a mechanism by: how often each of its hooks was called,
// the experiments it acted on (changed what was proposed, vetoed, rewrote or
// decided), and a failure that puts it out of action.
#pragma once

#include <map>
#include <set>
#include <string>

#include "core/hooks.h"

namespace ratchet {

class OuterMechanism : public Mechanism {
 public:
  void BeforePropose(const LoopView& view, Guidance* guidance) final;
  CandidateVerdict OnCandidate(const LoopView& view, const CandidateView& candidate) final;
  void OnResult(const LoopView& view, const Experiment& result) final;
  AcceptVerdict Accept(const LoopView& view, const Experiment& candidate,
                       const Experiment& incumbent) final;

  /// Calls by hook name since the mechanism was made.
  const std::map<std::string, long long>& calls() const { return calls_; }
  long long total_calls() const;
  /// Experiments the mechanism acted on.
  const std::set<int>& acted() const { return acted_; }
  /// Non-empty once the mechanism has failed; it then answers nothing.
  const std::string& failure() const { return failure_; }
  /// How it failed, for the ledger: "failed" unless the mechanism tells
  /// kinds apart (an external program: "crash", "hang", "garbage").
  virtual std::string failure_kind() const { return "failed"; }
  /// Retired: release what it holds (an external program is stopped).
  virtual void Stop() {}

 protected:
  /// Each returns true when it acted on the experiment (added guidance or
  /// hints, vetoed, rewrote, decided).
  virtual bool DoBeforePropose(const LoopView& view, Guidance* guidance) {
    (void)view, (void)guidance;
    return false;
  }
  virtual bool DoOnCandidate(const LoopView& view, const CandidateView& candidate,
                             CandidateVerdict* verdict) {
    (void)view, (void)candidate, (void)verdict;
    return false;
  }
  virtual void DoOnResult(const LoopView& view, const Experiment& result) {
    (void)view, (void)result;
  }
  virtual bool DoAccept(const LoopView& view, const Experiment& candidate,
                        const Experiment& incumbent, AcceptVerdict* verdict) {
    (void)view, (void)candidate, (void)incumbent, (void)verdict;
    return false;
  }
  void SetFailure(const std::string& failure) {
    if (failure_.empty()) failure_ = failure;
  }

 private:
  std::map<std::string, long long> calls_;
  std::set<int> acted_;
  std::string failure_;
};

}  // namespace ratchet
