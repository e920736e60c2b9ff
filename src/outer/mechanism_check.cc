#include "outer/mechanism_check.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

namespace ratchet {

namespace {

// Makes the point at unit position `u` (choices: index k).
std::string PointAt(const SearchSpace& space, double u, size_t k) {
  Point p(space.size());
  for (size_t i = 0; i < space.size(); ++i)
    p[i] = space.IsChoice(i) ? static_cast<double>(k % space.Levels(i)) : space.FromUnit(i, u);
  return space.ToJson(p);
}

}  // namespace

std::vector<Experiment> SyntheticTrace(const LoopConfig& config, const SearchSpace* space) {
  const bool min = config.goal == Goal::kMin;
  struct Row {
    Status status;
    double metric;
    double u;
  };
  const Row rows[] = {{Status::kKeep, 1.0, 0.5},    {Status::kKeep, 0.9, 0.3},
                      {Status::kDiscard, 1.1, 0.7}, {Status::kCrash, 0, 0.9},
                      {Status::kKeep, 0.8, 0.35},   {Status::kDiscard, 0.85, 0.1}};
  std::vector<Experiment> trace;
  std::string incumbent = "c0";
  for (size_t i = 0; i < std::size(rows); ++i) {
    Experiment e;
    e.id = static_cast<int>(i) + 1;
    e.baseline = i == 0;
    e.phase = Phase::kDone;
    e.status = rows[i].status;
    e.parent_commit = incumbent;
    e.candidate_commit = 'c' + std::to_string(i + 1);
    e.description = e.baseline ? "baseline" : "made-up change " + std::to_string(e.id);
    e.files_changed = config.edit_files.empty() ? std::vector<std::string>{"file"}
                                                : std::vector<std::string>{config.edit_files[0]};
    if (rows[i].status != Status::kCrash) e.metric = min ? rows[i].metric : 2 - rows[i].metric;
    else e.reason = "made-up crash";
    if (space && !e.baseline) e.params_json = PointAt(*space, rows[i].u, i);
    if (e.status == Status::kKeep) incumbent = e.candidate_commit;
    trace.push_back(e);
  }
  return trace;
}

CheckReport CheckMechanism(const ExternalSpec& spec, const LoopConfig& config,
                           const SearchSpace* space, const std::vector<Experiment>& trace,
                           int max_experiments) {
  CheckReport report;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<Experiment> used = trace;
  if (used.size() < 3) {
    used = SyntheticTrace(config, space);
    report.synthetic = true;
  }
  if (static_cast<int>(used.size()) > max_experiments) used.resize(max_experiments);
  report.experiments = static_cast<int>(used.size());

  std::string kind, err;
  std::unique_ptr<ExternalMechanism> m = ExternalMechanism::Start(spec, config, space, &kind, &err);
  if (!m) {
    report.kind = kind;
    report.reason = err;
    report.seconds = elapsed();
    return report;
  }
  const std::vector<Hook> hooks = m->hooks();
  auto takes = [&](Hook h) { return std::find(hooks.begin(), hooks.end(), h) != hooks.end(); };

  // Replays the trace as the engine would have called the hooks.
  std::vector<Experiment> history;
  history.reserve(used.size());  // pointers into it stay valid
  const Experiment* incumbent = nullptr;
  for (const Experiment& e : used) {
    if (!m->failure().empty()) break;
    LoopView view;
    view.config = &config;
    view.history = &history;
    view.incumbent = incumbent;
    view.next_id = e.id;
    if (!e.baseline) {
      if (takes(Hook::kBeforePropose)) {
        Guidance g;
        m->BeforePropose(view, &g);
      }
      if (takes(Hook::kOnCandidate) && m->failure().empty()) {
        CandidateView c;
        c.experiment_id = e.id;
        c.description = e.description;
        c.params_json = e.params_json;
        c.files_changed = e.files_changed;
        c.diff = "--- a/file\n+++ b/file\n@@ -1 +1 @@\n-old\n+new\n";
        m->OnCandidate(view, c);
      }
      if (takes(Hook::kAccept) && incumbent && e.metric && m->failure().empty())
        m->Accept(view, e, *incumbent);
    }
    history.push_back(e);
    if (e.status == Status::kKeep) incumbent = &history.back();
    view.incumbent = incumbent;
    view.next_id = e.id + 1;
    if (takes(Hook::kOnResult) && m->failure().empty()) m->OnResult(view, e);
  }
  report.calls = m->calls();
  report.seconds = elapsed();
  if (!m->failure().empty()) {
    report.kind = m->failure_kind();
    report.reason = m->failure();
    return report;
  }
  for (Hook h : hooks) {
    if (report.calls[HookName(h)] == 0) {
      report.kind = "never_called";
      report.reason = std::string("declares ") + HookName(h) +
                      " but the trace gave no occasion to call it";
      return report;
    }
  }
  m->Stop();
  report.ok = true;
  std::string list;
  for (Hook h : hooks)
    list += (list.empty() ? "" : ", ") + std::string(HookName(h)) + " x" +
            std::to_string(report.calls[HookName(h)]);
  report.reason = "answered " + list + " on " + std::to_string(report.experiments) +
                  (report.synthetic ? " made-up" : " recorded") + " experiments";
  return report;
}

std::string CheckReportJson(const CheckReport& r) {
  nlohmann::json j = {{"ok", r.ok},          {"reason", r.reason},
                      {"calls", r.calls},    {"experiments", r.experiments},
                      {"synthetic", r.synthetic}, {"seconds", r.seconds}};
  if (!r.kind.empty()) j["kind"] = r.kind;
  return j.dump(2);
}

}  // namespace ratchet
