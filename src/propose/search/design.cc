// Latin hypercube designs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "propose/search/algorithms.h"

namespace ratchet {

namespace {

// The values a discrete parameter may take inside the region, in order.
std::vector<double> DiscreteValues(const SearchContext& ctx, size_t i) {
  std::vector<double> values;
  const SearchSpace& space = ctx.space();
  for (size_t k = 0; k < space.Levels(i); ++k) {
    if (space.IsChoice(i)) {
      if (ctx.Allowed(i, k)) values.push_back(static_cast<double>(k));
    } else {
      const double v = space.IntLevel(i, k);
      const double u = space.ToUnit(i, v);
      if (u >= ctx.lo(i) - 1e-12 && u <= ctx.hi(i) + 1e-12) values.push_back(v);
    }
  }
  return values;
}

std::vector<Point> OneDesign(const SearchContext& ctx, int size, Rng& rng,
                             std::vector<std::vector<double>>* unit) {
  const SearchSpace& space = ctx.space();
  std::vector<Point> rows(size, ctx.anchor());
  unit->assign(size, std::vector<double>());
  for (size_t i : ctx.free_dims()) {
    std::vector<int> perm(size);
    for (int r = 0; r < size; ++r) perm[r] = r;
    for (int r = size - 1; r > 0; --r) std::swap(perm[r], perm[rng.Below(r + 1)]);
    const bool is_float = space.param(i).type == ParamSpec::Type::kFloat;
    const std::vector<double> values = is_float ? std::vector<double>() : DiscreteValues(ctx, i);
    for (int r = 0; r < size; ++r) {
      const double s = (perm[r] + rng.Uniform()) / size;  // stratum of this row
      (*unit)[r].push_back(s);
      if (is_float) {
        rows[r][i] = space.FromUnit(i, ctx.lo(i) + s * (ctx.hi(i) - ctx.lo(i)));
      } else if (!values.empty()) {
        const size_t k = std::min(values.size() - 1, static_cast<size_t>(s * values.size()));
        rows[r][i] = values[k];
      }
    }
  }
  return rows;
}

}  // namespace

std::vector<Point> LatinHypercube(const SearchContext& ctx, int size, uint64_t seed) {
  Rng rng(seed);
  std::vector<Point> best;
  double best_score = -1;
  // Of a few random designs keep the one whose closest pair is farthest apart.
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::vector<std::vector<double>> unit;
    std::vector<Point> rows = OneDesign(ctx, size, rng, &unit);
    double closest = std::numeric_limits<double>::infinity();
    for (int a = 0; a < size; ++a) {
      for (int b = 0; b < a; ++b) {
        double d2 = 0;
        for (size_t k = 0; k < unit[a].size(); ++k) {
          d2 += (unit[a][k] - unit[b][k]) * (unit[a][k] - unit[b][k]);
        }
        closest = std::min(closest, d2);
      }
    }
    if (closest > best_score) {
      best_score = closest;
      best = std::move(rows);
    }
  }
  return best;
}

bool SuggestLhs(const SearchContext& ctx, int size, uint64_t seed, Point* out,
                std::string* method) {
  for (uint64_t design = 0; design < 64; ++design) {
    const std::vector<Point> rows = LatinHypercube(ctx, size, MixSeed(seed, design));
    for (int r = 0; r < size; ++r) {
      if (ctx.Admissible(rows[r])) {
        *out = rows[r];
        *method = "lhs " + std::to_string(r + 1) + "/" + std::to_string(size);
        if (design > 0) *method += " (design " + std::to_string(design + 1) + ")";
        return true;
      }
    }
  }
  return false;
}

}  // namespace ratchet
