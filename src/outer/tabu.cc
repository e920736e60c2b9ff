#include "outer/tabu.h"

#include <cctype>
#include <cstdio>

#include "core/accept.h"
#include "outer/search_points.h"
#include "outer/trace_stats.h"

namespace ratchet {

namespace {

std::string Normalized(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string Radius(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", r);
  return buf;
}

}  // namespace

std::vector<Hook> TabuMechanism::hooks() const {
  if (options_.veto) return {Hook::kBeforePropose, Hook::kOnCandidate};
  return {Hook::kBeforePropose};
}

std::vector<const Experiment*> TabuMechanism::TabuList(const LoopView& view) const {
  std::vector<const Experiment*> out;
  if (!view.history) return out;
  int discards = 0, failures = 0;
  for (auto it = view.history->rbegin(); it != view.history->rend(); ++it) {
    if (it->status == Status::kDiscard && discards < options_.tenure) {
      ++discards;
      out.push_back(&*it);
    } else if (IsRunFailure(it->status) && failures < options_.failure_tenure) {
      ++failures;
      out.push_back(&*it);
    }
    if (discards >= options_.tenure && failures >= options_.failure_tenure) break;
  }
  return out;
}

bool TabuMechanism::DoBeforePropose(const LoopView& view, Guidance* guidance) {
  const std::vector<const Experiment*> tabu = TabuList(view);
  if (tabu.empty()) return false;
  if (!context_.space) {
    std::string text = "Do not repeat these recent changes, or changes close to them; they "
                       "did not help:";
    for (const Experiment* e : tabu)
      text += "\n- #" + std::to_string(e->id) + " (" + StatusName(e->status) +
              "): " + e->description;
    guidance->text.push_back(text);
    return true;
  }
  nlohmann::json avoid = nlohmann::json::array();
  for (const Experiment* e : tabu)
    if (std::optional<Point> p = ExperimentPoint(*context_.space, *e, nullptr))
      avoid.push_back(PointJson(*context_.space, *p));
  if (avoid.empty()) return false;
  SetHint(guidance, "avoid", avoid);
  SetHint(guidance, "avoid_radius", options_.radius);
  return true;
}

bool TabuMechanism::DoOnCandidate(const LoopView& view, const CandidateView& candidate,
                                  CandidateVerdict* verdict) {
  const std::vector<const Experiment*> tabu = TabuList(view);
  if (!context_.space) {
    const std::string d = Normalized(candidate.description);
    for (const Experiment* e : tabu) {
      if (!d.empty() && Normalized(e->description) == d) {
        verdict->veto = true;
        verdict->reason = "tabu: the same change as #" + std::to_string(e->id) + " (" +
                          StatusName(e->status) + ")";
        return true;
      }
    }
    return false;
  }
  Experiment as_experiment;
  as_experiment.params_json = candidate.params_json;
  const std::optional<Point> base = IncumbentPoint(*context_.space, view);
  const std::optional<Point> p =
      ExperimentPoint(*context_.space, as_experiment, base ? &*base : nullptr);
  if (!p) return false;
  for (const Experiment* e : tabu) {
    std::optional<Point> q = ExperimentPoint(*context_.space, *e, nullptr);
    if (!q || UnitDistance(*context_.space, *p, *q) > options_.radius) continue;
    verdict->veto = true;
    verdict->reason = "tabu: within " + Radius(options_.radius) + " of #" +
                      std::to_string(e->id) + " (" + StatusName(e->status) +
                      (e->metric ? ' ' + FormatMetric(*e->metric) : std::string()) + ")";
    return true;
  }
  return false;
}

}  // namespace ratchet
