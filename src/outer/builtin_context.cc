#include "outer/builtin_context.h"

#include <algorithm>

#include "outer/search_points.h"
#include "outer/trace_stats.h"

namespace ratchet {

namespace {
int Period(const StuckSchedule& s) {
  return std::max(1, s.stuck_after) + std::max(0, s.explore) + std::max(0, s.restart);
}
}  // namespace

StuckSchedule::Slot StuckSchedule::SlotAt(int since_best) const {
  const int p = since_best - std::max(1, stuck_after);
  if (p < 0) return Slot::kNone;
  const int q = p % Period(*this);
  if (q < explore) return Slot::kExplore;
  if (q < explore + restart) return Slot::kRestart;
  return Slot::kNone;
}

int StuckSchedule::EpisodeAt(int since_best) const {
  return std::max(0, since_best - std::max(1, stuck_after)) / Period(*this);
}

int StuckSchedule::StepAt(int since_best) const {
  const int q = std::max(0, since_best - std::max(1, stuck_after)) % Period(*this);
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

Point AnchorPoint(const SearchSpace& space, const LoopView& view) {
  if (std::optional<Point> p = IncumbentPoint(space, view)) return *p;
  Point mid(space.size());
  for (size_t i = 0; i < space.size(); ++i) mid[i] = space.IsChoice(i) ? 0 : space.FromUnit(i, 0.5);
  return mid;
}

}  // namespace ratchet
