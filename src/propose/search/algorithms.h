// The search algorithms, one function each, used by Optimizer (optimizer.h
// documents what each does). Each returns false when it finds no admissible
// point; the caller then falls back to another. Internal to the library.
#pragma once

#include <string>
#include <vector>

#include "propose/search/context.h"
#include "propose/search/rng.h"

namespace ratchet {

/// The `index`-th Latin hypercube design of `size` rows over the free
/// parameters (the best of a few random designs by minimum distance),
/// deterministic in `seed`.
std::vector<Point> LatinHypercube(const SearchContext& ctx, int size, uint64_t seed);

/// The first admissible row of the designs seeded from `seed`, design after
/// design; `method` says which ("lhs 3/8").
bool SuggestLhs(const SearchContext& ctx, int size, uint64_t seed, Point* out, std::string* method);

/// Pending points (ctx.pending()) join the bad group.
bool SuggestTpe(const SearchContext& ctx, const std::vector<Observation>& history, Rng& rng,
                Point* out);

/// Steps from `center`; the step size is replayed from the history (grown
/// after each new best, shrunk otherwise) unless the hints set it. A step
/// within half the step size of a pending point is redrawn (for a while).
bool SuggestLocal(const SearchContext& ctx, const std::vector<Observation>& history,
                  const Point& center, Rng& rng, Point* out, std::string* method);

/// Pending points (ctx.pending()) enter the model with the value `liar` says.
bool SuggestGp(const SearchContext& ctx, const std::vector<Observation>& history,
               SearchOptions::Liar liar, Rng& rng, Point* out);

}  // namespace ratchet
