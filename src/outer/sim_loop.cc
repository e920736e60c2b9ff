#include "outer/sim_loop.h"

#include <algorithm>

namespace ratchet {

SimLoop::SimLoop(const SearchSpace* space, SearchOptions search, const LoopConfig& config,
                 HookSet* hooks, OuterController* outer, EventSink* events)
    : space_(space),
      optimizer_(space, search),
      config_(config),
      hooks_(hooks),
      outer_(outer),
      events_(events) {}

LoopView SimLoop::View() const {
  LoopView v;
  v.config = &config_;
  v.history = &history_;
  for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
    if (it->status == Status::kKeep) {
      v.incumbent = &*it;
      break;
    }
  }
  v.next_id = static_cast<int>(history_.size()) + 1;
  return v;
}

void SimLoop::Finish(Experiment exp, const Point* point) {
  exp.phase = Phase::kDone;
  if (hooks_) exp.mechanisms = hooks_->TakeTouched();
  if (exp.status == Status::kKeep) {
    exp.candidate_commit = 'c' + std::to_string(exp.id);
    if (point) incumbent_point_ = *point;
  }
  history_.push_back(exp);
  // What the search proposer learns (SearchProposer::Observations).
  if (point) {
    Observation o;
    o.point = *point;
    if ((exp.status == Status::kKeep || exp.status == Status::kDiscard) && exp.metric) {
      o.kind = Observation::Kind::kValue;
      o.value = config_.goal == Goal::kMax ? -*exp.metric : *exp.metric;
    } else if (exp.status == Status::kCrash) {
      o.kind = Observation::Kind::kFailed;
    } else {
      o.kind = Observation::Kind::kTried;
    }
    observations_.push_back(o);
  }
  if (!hooks_) return;
  const LoopView view = View();
  hooks_->OnResult(view, history_.back());
  if (outer_) outer_->AfterExperiment(view, hooks_, events_);
  for (const std::string& name : hooks_->TakeTouched()) {
    std::vector<std::string>& m = history_.back().mechanisms;
    if (std::find(m.begin(), m.end(), name) == m.end()) m.push_back(name);
  }
  for (const auto& [key, n] : hooks_->TakeCounts()) calls_[key] += n;
}

void SimLoop::Run(const Point& start, const Objective& objective, int budget) {
  if (history_.empty()) {
    Experiment base;
    base.id = 1;
    base.baseline = true;
    base.description = "baseline";
    base.parent_commit = "c0";
    base.candidate_commit = "c1";
    base.metric = objective(start, runs_++);
    base.status = base.metric ? Status::kKeep : Status::kCrash;
    incumbent_point_ = start;
    // The baseline's point is the one in the files: the search sees it while
    // it is the incumbent, as the search proposer does.
    Finish(base, nullptr);
    Observation o;
    o.point = start;
    o.kind = Observation::Kind::kValue;
    o.value = base.metric ? (config_.goal == Goal::kMax ? -*base.metric : *base.metric) : 0;
    observations_.push_back(o);
  }
  if (!history_.front().metric) return;  // the engine stops when the baseline fails
  while (static_cast<int>(history_.size()) < budget) {
    const LoopView view = View();
    Experiment exp;
    exp.id = view.next_id;
    exp.proposer = "search";
    exp.parent_commit = view.incumbent ? view.incumbent->candidate_commit : "c0";
    // The baseline leaves the observations once something else is kept.
    std::vector<Observation> seen = observations_;
    if (view.incumbent && !view.incumbent->baseline && !seen.empty()) seen.erase(seen.begin());

    Guidance guidance;
    if (hooks_) guidance = hooks_->BeforePropose(view);
    SearchHints hints;
    std::string err;
    if (!ParseSearchHints(guidance.search_hints_json, *space_, incumbent_point_, &hints, &err)) {
      exp.status = Status::kProposeFailed;
      exp.reason = err;
      Finish(exp, nullptr);
      continue;
    }
    Suggestion s;
    if (!optimizer_.Suggest(seen, hints, &incumbent_point_, static_cast<uint64_t>(exp.id), &s,
                            &err)) {
      exp.status = err.rfind("no admissible point left", 0) == 0 ? Status::kNoChange
                                                                  : Status::kProposeFailed;
      exp.reason = "search: " + err;
      Finish(exp, nullptr);
      continue;
    }
    Point point = s.point;
    exp.params_json = space_->ToJson(point);
    exp.description = space_->Describe(point);
    exp.hypothesis = s.method;
    if (hooks_) {
      CandidateView c;
      c.experiment_id = exp.id;
      c.description = exp.description;
      c.params_json = exp.params_json;
      c.files_changed = {"sim"};
      const CandidateVerdict v = hooks_->OnCandidate(view, c);
      if (v.veto) {
        exp.status = Status::kRejected;
        exp.reason = v.reason;
        Finish(exp, &point);
        continue;
      }
      Point rewritten;
      if (!v.rewritten_params_json.empty() &&
          space_->FromJson(v.rewritten_params_json, incumbent_point_, &rewritten, &err)) {
        point = rewritten;
        exp.params_json = v.rewritten_params_json;
      }
    }
    exp.metric = objective(point, runs_++);
    if (!exp.metric) {
      exp.status = Status::kCrash;
      exp.reason = "crashed";
      Finish(exp, &point);
      continue;
    }
    const Experiment& incumbent = *view.incumbent;
    bool keep = !incumbent.metric || config_.Better(*exp.metric, *incumbent.metric, config_.min_delta);
    if (hooks_) {
      const AcceptVerdict a = hooks_->Accept(View(), exp, incumbent);
      if (a.decided) keep = a.keep;
    }
    exp.status = keep ? Status::kKeep : Status::kDiscard;
    Finish(exp, &point);
  }
}

}  // namespace ratchet
