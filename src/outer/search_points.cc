#include "outer/search_points.h"

#include <algorithm>
#include <cmath>

#include "outer/trace_stats.h"

namespace ratchet {

using json = nlohmann::json;

std::optional<Point> ExperimentPoint(const SearchSpace& space, const Experiment& e,
                                     const Point* base) {
  if (e.params_json.empty()) return std::nullopt;
  json obj = json::parse(e.params_json, nullptr, false);
  if (!obj.is_object()) return std::nullopt;
  Point p = base ? *base : Point(space.size(), std::nan(""));
  for (const auto& [name, value] : obj.items()) {
    const int i = space.Find(name);
    if (i < 0) continue;
    std::string err;
    if (!space.ValueFromJson(static_cast<size_t>(i), value, &p[static_cast<size_t>(i)], &err))
      return std::nullopt;
  }
  for (double v : p)
    if (std::isnan(v)) return std::nullopt;
  return p;
}

std::optional<Point> IncumbentPoint(const SearchSpace& space, const LoopView& view) {
  if (!view.incumbent) return std::nullopt;
  return ExperimentPoint(space, *view.incumbent, nullptr);
}

std::vector<Observation> ObservationsOf(const SearchSpace& space,
                                        const std::vector<Experiment>& history, Goal goal,
                                        const Point* base) {
  std::vector<Observation> out;
  for (const Experiment& e : history) {
    std::optional<Point> p = ExperimentPoint(space, e, base);
    if (!p) continue;
    Observation o;
    o.point = *p;
    if ((e.status == Status::kKeep || e.status == Status::kDiscard) && e.metric) {
      o.kind = Observation::Kind::kValue;
      o.value = goal == Goal::kMax ? -*e.metric : *e.metric;
    } else if (IsRunFailure(e.status) || e.status == Status::kKeep ||
               e.status == Status::kDiscard) {
      o.kind = Observation::Kind::kFailed;
    } else if (e.status == Status::kInterrupted || e.status == Status::kNone) {
      continue;
    } else {
      o.kind = Observation::Kind::kTried;
    }
    out.push_back(std::move(o));
  }
  return out;
}

double UnitDistance(const SearchSpace& space, const Point& a, const Point& b) {
  double d = 0;
  for (size_t i = 0; i < space.size() && i < a.size() && i < b.size(); ++i) {
    if (space.IsChoice(i)) {
      d = std::max(d, a[i] == b[i] ? 0.0 : 1.0);
    } else {
      d = std::max(d, std::fabs(space.ToUnit(i, a[i]) - space.ToUnit(i, b[i])));
    }
  }
  return d;
}

json PointJson(const SearchSpace& space, const Point& point) {
  return json::parse(space.ToJson(point));
}

namespace {

json HintsOf(const Guidance& guidance) {
  if (guidance.search_hints_json.empty()) return json::object();
  json j = json::parse(guidance.search_hints_json, nullptr, false);
  return j.is_object() ? j : json::object();
}

}  // namespace

void SetHint(Guidance* guidance, const std::string& key, const json& value) {
  json hints = HintsOf(*guidance);
  if (key == "avoid" && hints.contains("avoid") && hints["avoid"].is_array() && value.is_array()) {
    for (const json& point : value) hints["avoid"].push_back(point);
  } else {
    hints[key] = value;
  }
  guidance->search_hints_json = hints.dump();
}

json GetHint(const Guidance& guidance, const std::string& key) {
  json hints = HintsOf(guidance);
  auto it = hints.find(key);
  return it == hints.end() ? json() : *it;
}

}  // namespace ratchet
