#include "propose/search/optimizer.h"

#include <algorithm>
#include <cmath>

#include "propose/search/algorithms.h"
#include "propose/search/context.h"
#include "propose/search/rng.h"

namespace ratchet {

namespace {

constexpr struct {
  Algorithm algorithm;
  const char* name;
} kAlgorithmNames[] = {{Algorithm::kAuto, "auto"},   {Algorithm::kRandom, "random"},
                       {Algorithm::kLhs, "lhs"},     {Algorithm::kTpe, "tpe"},
                       {Algorithm::kLocal, "local"}, {Algorithm::kGp, "gp"}};

constexpr struct {
  SearchOptions::Liar liar;
  const char* name;
} kLiarNames[] = {{SearchOptions::Liar::kBest, "best"},
                  {SearchOptions::Liar::kMean, "mean"},
                  {SearchOptions::Liar::kWorst, "worst"},
                  {SearchOptions::Liar::kBeliever, "believer"}};

// Stream tags, so each use of the seed draws its own numbers.
constexpr uint64_t kDesignStream = 0x1d5;

}  // namespace

const char* LiarName(SearchOptions::Liar liar) {
  for (const auto& l : kLiarNames) {
    if (l.liar == liar) return l.name;
  }
  return "?";
}

bool ParseLiar(const std::string& name, SearchOptions::Liar* out) {
  for (const auto& l : kLiarNames) {
    if (name == l.name) {
      *out = l.liar;
      return true;
    }
  }
  return false;
}

const char* AlgorithmName(Algorithm algorithm) {
  for (const auto& a : kAlgorithmNames) {
    if (a.algorithm == algorithm) return a.name;
  }
  return "?";
}

bool ParseAlgorithm(const std::string& name, Algorithm* out) {
  for (const auto& a : kAlgorithmNames) {
    if (name == a.name) {
      *out = a.algorithm;
      return true;
    }
  }
  return false;
}

Optimizer::Optimizer(const SearchSpace* space, SearchOptions options)
    : space_(space), options_(options) {}

int Optimizer::InitSize() const {
  if (options_.init > 0) return options_.init;
  return std::clamp(static_cast<int>(space_->size()) + 3, 5, 10);
}

Error Optimizer::Suggest(const std::vector<Observation>& history, const std::vector<Point>& pending,
                         const SearchHints& hints, const Point* incumbent, uint64_t salt,
                         Suggestion* out) const {
  // The anchor: the incumbent, else the best result, else the middle.
  Point anchor;
  if (incumbent) {
    anchor = *incumbent;
  } else {
    const Observation* best = nullptr;
    for (const Observation& o : history) {
      if (o.kind == Observation::Kind::kValue && (!best || o.value < best->value)) best = &o;
    }
    if (best) {
      anchor = best->point;
    } else {
      anchor.resize(space_->size());
      for (size_t i = 0; i < space_->size(); ++i) {
        anchor[i] = space_->IsChoice(i) ? 0 : space_->FromUnit(i, 0.5);
      }
    }
  }
  const SearchContext ctx(*space_, hints, anchor, history, pending);

  if (hints.next) {
    const Point& p = *hints.next;
    const std::string violated = space_->Violated(p);
    const std::string next = "search hints: next " + space_->Describe(p);
    if (!space_->Contains(p)) return Error::InvalidArgument(next + " is not in the search space");
    if (!violated.empty())
      return Error::InvalidArgument(next + " breaks the constraint " + violated);
    if (ctx.Tried(p)) return Error::InvalidArgument(next + " was already tried");
    if (ctx.IsPending(p)) return Error::InvalidArgument(next + " is in flight on another worker");
    out->point = p;
    out->method = "next (hint)";
    return {};
  }

  Algorithm algorithm = options_.algorithm;
  if (!hints.algorithm.empty() && !ParseAlgorithm(hints.algorithm, &algorithm))
    return Error::InvalidArgument("search hints: unknown algorithm '" + hints.algorithm + "'");
  Rng rng(MixSeed(options_.seed, salt));
  const int init = InitSize();
  const uint64_t design_seed = MixSeed(options_.seed, kDesignStream);
  // Points in flight are rows of the initial design too: with many workers
  // the design is not run twice over.
  const bool initial = static_cast<int>(history.size() + pending.size()) < init;
  bool found = false;
  std::string method;
  switch (algorithm) {
    case Algorithm::kRandom:
      break;
    case Algorithm::kLhs:
      found = SuggestLhs(ctx, init, design_seed, &out->point, &method);
      break;
    case Algorithm::kLocal:
      found = SuggestLocal(ctx, history, anchor, rng, &out->point, &method);
      break;
    case Algorithm::kTpe:
      found = initial ? SuggestLhs(ctx, init, design_seed, &out->point, &method)
                      : SuggestTpe(ctx, history, rng, &out->point);
      if (found && method.empty()) method = "tpe";
      break;
    case Algorithm::kGp:
    case Algorithm::kAuto:
      if (initial) {
        found = SuggestLhs(ctx, init, design_seed, &out->point, &method);
      } else if (SuggestGp(ctx, history, options_.liar, rng, &out->point)) {
        found = true;
        method = "gp";
      } else if (SuggestTpe(ctx, history, rng, &out->point)) {
        found = true;
        method = "tpe (gp unavailable)";
      }
      break;
  }
  if (!found) {
    bool exhausted = false;
    if (!ctx.SampleAdmissible(rng, 5000, &out->point, &exhausted)) {
      if (exhausted) {
        return Error::Exhausted(
            "no admissible point left: every point the space, its constraints and the hints "
            "allow has been tried" +
            std::string(pending.empty() ? "" : " or is in flight"));
      }
      return Error::InvalidArgument(
          "found no admissible point in 5000 random draws: the constraints and hints leave "
          "(almost) no room in the space");
    }
    method = algorithm == Algorithm::kRandom ? "random" : "random (fallback)";
  }
  out->method = method;
  return {};
}

bool Study::Ask(Point* point, std::string* err) {
  Suggestion s;
  if (!optimizer_
           .Suggest(history_, pending_, SearchHints(), nullptr, history_.size() + pending_.size(),
                    &s)
           .Report(err)) {
    return false;
  }
  *point = s.point;
  pending_.push_back(s.point);
  last_method_ = s.method;
  return true;
}

void Study::Tell(const Point& point, std::optional<double> value) {
  auto it = std::find(pending_.begin(), pending_.end(), point);
  if (it != pending_.end()) pending_.erase(it);
  Observation o;
  o.point = point;
  o.kind = value ? Observation::Kind::kValue : Observation::Kind::kFailed;
  o.value = value.value_or(0);
  history_.push_back(std::move(o));
}

const Observation* Study::Best() const {
  const Observation* best = nullptr;
  for (const Observation& o : history_) {
    if (o.kind == Observation::Kind::kValue && (!best || o.value < best->value)) best = &o;
  }
  return best;
}

}  // namespace ratchet
