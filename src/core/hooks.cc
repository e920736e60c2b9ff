#include "core/hooks.h"

#include <algorithm>

namespace ratchet {

const char* HookName(Hook hook) {
  switch (hook) {
    case Hook::kBeforePropose: return "before_propose";
    case Hook::kOnCandidate: return "on_candidate";
    case Hook::kOnResult: return "on_result";
    case Hook::kAccept: return "accept";
  }
  return "?";
}

void HookSet::Add(std::shared_ptr<Mechanism> mechanism) {
  Remove(mechanism->name());
  mechanisms_.push_back(std::move(mechanism));
}

bool HookSet::Remove(const std::string& name) {
  auto it = std::find_if(mechanisms_.begin(), mechanisms_.end(),
                         [&](const auto& m) { return m->name() == name; });
  if (it == mechanisms_.end()) return false;
  mechanisms_.erase(it);
  return true;
}

std::vector<std::string> HookSet::Names() const {
  std::vector<std::string> names;
  for (const auto& m : mechanisms_) names.push_back(m->name());
  return names;
}

bool HookSet::Implements(const Mechanism& m, Hook hook) const {
  const std::vector<Hook> hooks = m.hooks();
  return std::find(hooks.begin(), hooks.end(), hook) != hooks.end();
}

void HookSet::Count(const Mechanism& m, Hook hook) {
  ++counts_[{m.name(), HookName(hook)}];
  if (std::find(touched_.begin(), touched_.end(), m.name()) == touched_.end())
    touched_.push_back(m.name());
}

Guidance HookSet::BeforePropose(const LoopView& view) {
  Guidance guidance;
  for (const auto& m : mechanisms_) {
    if (!Implements(*m, Hook::kBeforePropose)) continue;
    Count(*m, Hook::kBeforePropose);
    m->BeforePropose(view, &guidance);
  }
  return guidance;
}

CandidateVerdict HookSet::OnCandidate(const LoopView& view, const CandidateView& candidate) {
  CandidateVerdict result;
  Usage spent;  // by every mechanism called, vetoing or not
  for (const auto& m : mechanisms_) {
    if (!Implements(*m, Hook::kOnCandidate)) continue;
    Count(*m, Hook::kOnCandidate);
    CandidateVerdict verdict = m->OnCandidate(view, candidate);
    spent.input_tokens += verdict.usage.input_tokens;
    spent.output_tokens += verdict.usage.output_tokens;
    spent.cost_usd += verdict.usage.cost_usd;
    if (verdict.veto) {
      if (verdict.reason.empty()) verdict.reason = "vetoed by " + m->name();
      verdict.usage = spent;
      return verdict;
    }
    if (!verdict.rewritten_params_json.empty()) result = verdict;
  }
  result.usage = spent;
  return result;
}

void HookSet::OnResult(const LoopView& view, const Experiment& result) {
  for (const auto& m : mechanisms_) {
    if (!Implements(*m, Hook::kOnResult)) continue;
    Count(*m, Hook::kOnResult);
    m->OnResult(view, result);
  }
}

AcceptVerdict HookSet::Accept(const LoopView& view, const Experiment& candidate,
                              const Experiment& incumbent) {
  for (const auto& m : mechanisms_) {
    if (!Implements(*m, Hook::kAccept)) continue;
    Count(*m, Hook::kAccept);
    AcceptVerdict verdict = m->Accept(view, candidate, incumbent);
    if (verdict.decided) {
      if (verdict.reason.empty()) verdict.reason = "decided by " + m->name();
      return verdict;
    }
  }
  return {};
}

std::map<std::pair<std::string, std::string>, long long> HookSet::TakeCounts() {
  return std::exchange(counts_, {});
}

std::vector<std::string> HookSet::TakeTouched() { return std::exchange(touched_, {}); }

}  // namespace ratchet
