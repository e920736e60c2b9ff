// What the built-in mechanisms share: the loop's search space (when the
// proposer is the search), a seed, and the schedule of a stagnation episode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/hooks.h"
#include "propose/search/hints.h"
#include "propose/search/space.h"

namespace ratchet {

/// When the loop is stuck (no new best for `stuck_after` experiments), an
/// episode begins: `explore` experiments of space-filling exploration, then
/// `restart` experiments stepping from an elite point other than the
/// incumbent, then the inner search alone again for `stuck_after`, and so
/// on until a new best ends the episode. A function of the history alone.
struct StuckSchedule {
  int stuck_after = 8;
  int explore = 5;
  int restart = 8;
  enum class Slot { kNone, kExplore, kRestart };
  /// The slot of the next experiment when the incumbent has not improved
  /// for `since_best` experiments.
  Slot SlotAt(int since_best) const;
  /// Which episode (0, 1, ...) and which step in its slot; valid when
  /// SlotAt(since_best) != kNone.
  int EpisodeAt(int since_best) const;
  int StepAt(int since_best) const;
  /// Experiments in one episode (stuck_after + explore + restart).
  int Period() const;
};

struct BuiltinContext {
  /// Null when the proposer is not the search: mechanisms then give text.
  const SearchSpace* space = nullptr;
  uint64_t seed = 0;
  StuckSchedule schedule;
  /// A search counts as stuck only while its recent proposals stay within
  /// this distance of the incumbent (median, unit scale): a search that
  /// already spreads its proposals over the space needs no push to explore.
  double stuck_spread = 0.25;
};

/// True when the search's own proposals of this episode (the `stuck_after`
/// experiments before its exploration began) stayed near the incumbent: their
/// median UnitDistance is at most stuck_spread. Also true when that cannot be
/// told (no space, no incumbent point).
bool SearchIsLocal(const BuiltinContext& context, const LoopView& view, int since_best);

/// Experiments since the incumbent of `view` last improved (see TraceStats).
int SinceBest(const LoopView& view);

/// The hints given so far this proposal, parsed against the space (for
/// admissibility checks that honour other mechanisms' tabu points and
/// regions); `anchor` fills a partial "next". False on hints the search
/// would refuse too.
bool CurrentHints(const SearchSpace& space, const Guidance& guidance, const Point& anchor,
                  SearchHints* out);

/// The incumbent's point, else the middle of the space.
Point AnchorPoint(const SearchSpace& space, const LoopView& view);

}  // namespace ratchet
