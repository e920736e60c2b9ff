#include "outer/mechanism.h"

namespace ratchet {

long long OuterMechanism::total_calls() const {
  long long n = 0;
  for (const auto& [hook, calls] : calls_) n += calls;
  return n;
}

void OuterMechanism::BeforePropose(const LoopView& view, Guidance* guidance) {
  ++calls_[HookName(Hook::kBeforePropose)];
  if (failure_.empty() && DoBeforePropose(view, guidance)) acted_.insert(view.next_id);
}

CandidateVerdict OuterMechanism::OnCandidate(const LoopView& view,
                                             const CandidateView& candidate) {
  ++calls_[HookName(Hook::kOnCandidate)];
  CandidateVerdict verdict;
  if (failure_.empty() && DoOnCandidate(view, candidate, &verdict))
    acted_.insert(candidate.experiment_id);
  return verdict;
}

void OuterMechanism::OnResult(const LoopView& view, const Experiment& result) {
  ++calls_[HookName(Hook::kOnResult)];
  if (failure_.empty()) DoOnResult(view, result);
}

AcceptVerdict OuterMechanism::Accept(const LoopView& view, const Experiment& candidate,
                                     const Experiment& incumbent) {
  ++calls_[HookName(Hook::kAccept)];
  AcceptVerdict verdict;
  if (failure_.empty() && DoAccept(view, candidate, incumbent, &verdict))
    acted_.insert(candidate.id);
  return verdict;
}

}  // namespace ratchet
