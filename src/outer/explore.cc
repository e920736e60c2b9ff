#include "outer/explore.h"

#include <algorithm>
#include <cmath>

#include "core/accept.h"
#include "outer/search_points.h"
#include "propose/search/algorithms.h"
#include "propose/search/context.h"
#include "propose/search/rng.h"

namespace ratchet {

namespace {

constexpr uint64_t kExploreStream = 0xe7a1, kRestartStream = 0x4e57;

std::string Count(int step, int of) {
  return '(' + std::to_string(step + 1) + " of " + std::to_string(of) + ")";
}

}  // namespace

bool ExploreMechanism::DoBeforePropose(const LoopView& view, Guidance* guidance) {
  const StuckSchedule& schedule = context_.schedule;
  const int since = SinceBest(view);
  if (schedule.SlotAt(since) != StuckSchedule::Slot::kExplore) return false;
  if (!GetHint(*guidance, "next").is_null()) return false;
  if (!SearchIsLocal(context_, view, since)) return false;  // it explores by itself
  const int step = schedule.StepAt(since);
  if (!context_.space) {
    guidance->text.push_back(
        "The last " + std::to_string(since) +
        " experiments found nothing better. Explore " + Count(step, schedule.explore) +
        ": make a bold change unlike every change tried so far (another part of the code, "
        "another idea), not another small step from the current best.");
    return true;
  }
  const SearchSpace& space = *context_.space;
  const Point anchor = AnchorPoint(space, view);
  SearchHints hints;
  if (!CurrentHints(space, *guidance, anchor, &hints)) return false;
  hints.next.reset();
  const std::vector<Observation> history =
      ObservationsOf(space, *view.history, view.config->goal, &anchor);
  const SearchContext ctx(space, hints, anchor, history, /*pending=*/{});
  // One design per episode (and incumbent): its rows are used in turn, as
  // each used row is then tried.
  const uint64_t seed = MixSeed(MixSeed(context_.seed, kExploreStream),
                                static_cast<uint64_t>(view.incumbent ? view.incumbent->id : 0) *
                                        1000 +
                                    static_cast<uint64_t>(schedule.EpisodeAt(since)));
  Point p;
  std::string method;
  if (!SuggestLhs(ctx, std::max(2, schedule.explore), seed, &p, &method)) return false;
  SetHint(guidance, "next", PointJson(space, p));
  return true;
}

const Experiment* RestartMechanism::Elite(const LoopView& view) const {
  if (!view.history || !view.config) return nullptr;
  const Goal goal = view.config->goal;
  std::optional<Point> incumbent;
  if (context_.space) incumbent = IncumbentPoint(*context_.space, view);
  const Experiment* elite = nullptr;
  for (const Experiment& e : *view.history) {
    if (!e.metric || (e.status != Status::kKeep && e.status != Status::kDiscard)) continue;
    if (view.incumbent && e.id == view.incumbent->id) continue;
    if (context_.space) {
      std::optional<Point> p = ExperimentPoint(*context_.space, e, nullptr);
      if (!p) continue;
      if (incumbent && UnitDistance(*context_.space, *p, *incumbent) < options_.min_distance)
        continue;
    } else if (e.status != Status::kDiscard) {
      continue;  // earlier keeps are the incumbent's own ancestors
    }
    if (!elite || (goal == Goal::kMin ? *e.metric < *elite->metric : *e.metric > *elite->metric))
      elite = &e;
  }
  return elite;
}

bool RestartMechanism::DoBeforePropose(const LoopView& view, Guidance* guidance) {
  const StuckSchedule& schedule = context_.schedule;
  const int since = SinceBest(view);
  if (schedule.SlotAt(since) != StuckSchedule::Slot::kRestart) return false;
  if (!GetHint(*guidance, "next").is_null()) return false;
  if (!SearchIsLocal(context_, view, since)) return false;
  const Experiment* elite = Elite(view);
  if (!elite) return false;
  const int step = schedule.StepAt(since);
  if (!context_.space) {
    guidance->text.push_back(
        "Restart " + Count(step, schedule.restart) + ": experiment #" + std::to_string(elite->id) +
        " (" + FormatMetric(*elite->metric) + ", " + StatusName(elite->status) +
        ") was a good result of another kind than the current best. Start again from its "
        "change (`git show refs/ratchet/tried/" + std::to_string(elite->id) +
        "`) and improve on it.");
    return true;
  }
  const SearchSpace& space = *context_.space;
  const Point anchor = AnchorPoint(space, view);
  const std::optional<Point> center = ExperimentPoint(space, *elite, &anchor);
  if (!center) return false;
  SearchHints hints;
  if (!CurrentHints(space, *guidance, anchor, &hints)) return false;
  hints.next.reset();
  const std::vector<Observation> history =
      ObservationsOf(space, *view.history, view.config->goal, &anchor);
  // The elite's values stand in for frozen parameters: the step is taken there.
  const SearchContext ctx(space, hints, *center, history, /*pending=*/{});
  Rng rng(MixSeed(MixSeed(context_.seed, kRestartStream), static_cast<uint64_t>(view.next_id)));
  const double dims = static_cast<double>(std::max<size_t>(ctx.free_dims().size(), 1));
  for (int attempt = 0; attempt < 300; ++attempt) {
    const double s = std::min(1.0, options_.step * std::pow(1.03, attempt));
    const Point p = ctx.Perturb(*center, s, std::min(1.0, 2.0 / dims + 0.5), rng);
    if (ctx.Admissible(p)) {
      SetHint(guidance, "next", PointJson(space, p));
      return true;
    }
  }
  return false;
}

}  // namespace ratchet
