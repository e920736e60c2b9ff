#include "outer/external_mechanism.h"

#include <algorithm>
#include <cstdio>

#include "outer/builtin_context.h"
#include "outer/protocol.h"
#include "outer/search_points.h"

namespace ratchet {

namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", s);
  return buf;
}

}  // namespace

std::unique_ptr<ExternalMechanism> ExternalMechanism::Start(const ExternalSpec& spec,
                                                            const LoopConfig& config,
                                                            const SearchSpace* space,
                                                            std::string* kind, std::string* err) {
  std::unique_ptr<ExternalMechanism> m(new ExternalMechanism(spec, space));
  LineProcess::Options options;
  options.argv = spec.command;
  options.cwd = spec.cwd;
  options.stderr_path = spec.stderr_path;
  options.env = {{"RATCHET_MECHANISM", spec.name}};
  options.sandbox = spec.sandbox;
  if (!m->process_.Start(options, err)) {
    *kind = "crash";
    return nullptr;
  }
  std::string answer;
  if (!m->Ask(HelloRequest(config, space), "hello", &answer)) {
    *kind = m->failure_kind_;
    *err = m->failure();
    return nullptr;
  }
  std::string why;
  if (!ParseHelloAnswer(answer, &m->hooks_, &why)) {
    m->Garbage("hello", why);
    *kind = m->failure_kind_;
    *err = m->failure();
    return nullptr;
  }
  return m;
}

ExternalMechanism::~ExternalMechanism() { Stop(); }

void ExternalMechanism::Stop() { process_.Stop(1); }

bool ExternalMechanism::Takes(Hook hook) const {
  return std::find(hooks_.begin(), hooks_.end(), hook) != hooks_.end();
}

bool ExternalMechanism::Ask(const nlohmann::json& request, const char* hook, std::string* answer) {
  if (!failure().empty()) return false;
  ++exchanges_;
  switch (process_.Exchange(ToLine(request), spec_.timeout_s, answer)) {
    case LineProcess::Outcome::kAnswered:
      return true;
    case LineProcess::Outcome::kTimedOut:
      failure_kind_ = "hang";
      SetFailure("hung: no answer to " + std::string(hook) + " within " +
                 Seconds(spec_.timeout_s) + " (killed)");
      return false;
    case LineProcess::Outcome::kTooLong:
      Garbage(hook, "an answer line longer than 1 MiB");
      return false;
    case LineProcess::Outcome::kExited:
      failure_kind_ = "crash";
      SetFailure("crashed: ended (" + process_.exit_description() + ") instead of answering " +
                 hook);
      return false;
  }
  return false;
}

void ExternalMechanism::Garbage(const char* hook, const std::string& what) {
  if (!failure().empty()) return;
  failure_kind_ = "garbage";
  SetFailure("garbage answer to " + std::string(hook) + ": " + what);
  process_.Stop(0);
}

Point ExternalMechanism::Anchor(const LoopView& view) const {
  return space_ ? AnchorPoint(*space_, view) : Point();
}

bool ExternalMechanism::CatchUp(const LoopView& view, int upto_id) {
  if (!view.history) return true;
  for (const Experiment& e : *view.history) {
    if (e.id <= seen_ || e.id >= upto_id) continue;
    if (Takes(Hook::kOnResult)) {
      std::string answer, why;
      if (!Ask(OnResultRequest(e, true), "on_result (replay)", &answer)) return false;
      if (!ParseOnResultAnswer(answer, &why)) {
        Garbage("on_result (replay)", why);
        return false;
      }
    }
    seen_ = e.id;
  }
  return true;
}

bool ExternalMechanism::DoBeforePropose(const LoopView& view, Guidance* guidance) {
  if (!CatchUp(view, view.next_id)) return false;
  std::string answer, why;
  if (!Ask(BeforeProposeRequest(view, SinceBest(view)), "before_propose", &answer)) return false;
  Guidance mine;
  if (!ParseBeforeProposeAnswer(answer, space_, Anchor(view), &mine, &why)) {
    Garbage("before_propose", why);
    return false;
  }
  for (const std::string& t : mine.text) guidance->text.push_back(t);
  if (!mine.search_hints_json.empty()) {
    const nlohmann::json hints = nlohmann::json::parse(mine.search_hints_json);
    for (const auto& [key, value] : hints.items()) SetHint(guidance, key, value);
  }
  return !mine.text.empty() || !mine.search_hints_json.empty();
}

bool ExternalMechanism::DoOnCandidate(const LoopView& view, const CandidateView& candidate,
                                      CandidateVerdict* verdict) {
  if (!CatchUp(view, candidate.experiment_id)) return false;
  std::string answer, why;
  if (!Ask(OnCandidateRequest(candidate), "on_candidate", &answer)) return false;
  if (!ParseOnCandidateAnswer(answer, space_, Anchor(view), verdict, &why)) {
    *verdict = CandidateVerdict();
    Garbage("on_candidate", why);
    return false;
  }
  if (verdict->veto && verdict->reason.empty()) verdict->reason = "vetoed by " + name();
  return verdict->veto || !verdict->rewritten_params_json.empty();
}

void ExternalMechanism::DoOnResult(const LoopView& view, const Experiment& result) {
  if (!CatchUp(view, result.id)) return;
  std::string answer, why;
  if (!Ask(OnResultRequest(result, false), "on_result", &answer)) return;
  if (!ParseOnResultAnswer(answer, &why)) {
    Garbage("on_result", why);
    return;
  }
  seen_ = std::max(seen_, result.id);
}

bool ExternalMechanism::DoAccept(const LoopView& view, const Experiment& candidate,
                                 const Experiment& incumbent, AcceptVerdict* verdict) {
  if (!CatchUp(view, candidate.id)) return false;
  std::string answer, why;
  if (!Ask(AcceptRequest(candidate, incumbent), "accept", &answer)) return false;
  if (!ParseAcceptAnswer(answer, verdict, &why)) {
    *verdict = AcceptVerdict();
    Garbage("accept", why);
    return false;
  }
  if (verdict->decided && verdict->reason.empty()) verdict->reason = "decided by " + name();
  return verdict->decided;
}

}  // namespace ratchet
