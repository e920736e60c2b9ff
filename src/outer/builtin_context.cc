#include "outer/builtin_context.h"

#include <algorithm>

#include "outer/search_points.h"
#include "outer/trace_stats.h"

namespace ratchet {

int StuckSchedule::Period() const {
  return std::max(1, stuck_after) + std::max(0, explore) + std::max(0, restart);
}

StuckSchedule::Slot StuckSchedule::SlotAt(int since_best) const {
  const int p = since_best - std::max(1, stuck_after);
  if (p < 0) return Slot::kNone;
  const int q = p % Period();
  if (q < explore) return Slot::kExplore;
  if (q < explore + restart) return Slot::kRestart;
  return Slot::kNone;
}

int StuckSchedule::EpisodeAt(int since_best) const {
  return std::max(0, since_best - std::max(1, stuck_after)) / Period();
}

int StuckSchedule::StepAt(int since_best) const {
  const int q = std::max(0, since_best - std::max(1, stuck_after)) % Period();
  return q < explore ? q : q - explore;
}

int SinceBest(const LoopView& view) {
  if (!view.history || !view.config) return 0;
  return ComputeTraceStats(*view.history, view.config->goal, 1).since_best;
}

bool CurrentHints(const SearchSpace& space, const Guidance& guidance, const Point& anchor,
                  SearchHints* out) {
  std::string err;
  return ParseSearchHints(guidance.search_hints_json, space, anchor, out, &err);
}

bool SearchIsLocal(const BuiltinContext& context, const LoopView& view, int since_best) {
  if (!context.space || !view.history || !view.incumbent) return true;
  const std::optional<Point> incumbent = IncumbentPoint(*context.space, view);
  if (!incumbent) return true;
  const StuckSchedule& s = context.schedule;
  // Ids are 1-based and contiguous: the episode's own proposals come first.
  const int first = view.incumbent->id + 1 + s.EpisodeAt(since_best) * s.Period();
  std::vector<double> distances;
  for (int id = first; id < first + std::max(1, s.stuck_after); ++id) {
    if (id < 1 || id > static_cast<int>(view.history->size())) break;
    const Experiment& e = (*view.history)[static_cast<size_t>(id - 1)];
    if (std::optional<Point> p = ExperimentPoint(*context.space, e, &*incumbent))
      distances.push_back(UnitDistance(*context.space, *p, *incumbent));
  }
  if (distances.empty()) return true;
  std::nth_element(distances.begin(), distances.begin() + distances.size() / 2, distances.end());
  return distances[distances.size() / 2] <= context.stuck_spread;
}

Point AnchorPoint(const SearchSpace& space, const LoopView& view) {
  if (std::optional<Point> p = IncumbentPoint(space, view)) return *p;
  Point mid(space.size());
  for (size_t i = 0; i < space.size(); ++i) mid[i] = space.IsChoice(i) ? 0 : space.FromUnit(i, 0.5);
  return mid;
}

}  // namespace ratchet
