#include "outer/bandit.h"

#include <cmath>
#include <cstdio>

#include "outer/search_points.h"

namespace ratchet {

namespace {

std::string Label(const char* what, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s %.3g", what, v);
  return buf;
}

}  // namespace

bool BanditMechanism::Create(const BuiltinContext& context, const BanditOptions& options,
                             std::unique_ptr<BanditMechanism>* out, std::string* err) {
  std::vector<BanditArm> arms;
  if (options.over == "step") {
    for (double s : options.steps) {
      if (!(s > 0 && s <= 1)) {
        *err = "bandit steps must be in (0, 1]";
        return false;
      }
      arms.push_back({Label("step", s), {{"step", s}}, "", 0, 0});
    }
  } else if (options.over == "exploration") {
    for (double e : options.explorations) {
      if (!(e >= 0 && e <= 1)) {
        *err = "bandit explorations must be in [0, 1]";
        return false;
      }
      arms.push_back({Label("exploration", e), {{"exploration", e}}, "", 0, 0});
    }
  } else if (options.over == "params") {
    if (!context.space) {
      *err = "bandit over \"params\" needs the search proposer (propose.kind = \"search\")";
      return false;
    }
    for (const ParamSpec& p : context.space->params())
      arms.push_back({"only " + p.name, {{"active", {p.name}}}, "", 0, 0});
  } else if (options.over == "families") {
    for (const std::string& f : options.families)
      arms.push_back({f, nlohmann::json::object(), "Kind of change to try now: " + f, 0, 0});
  } else {
    *err = "bandit over \"" + options.over +
           "\" is not one of \"step\", \"exploration\", \"params\", \"families\"";
    return false;
  }
  if (arms.size() < 2) {
    *err = "the bandit needs at least two arms (over = \"" + options.over + "\")";
    return false;
  }
  out->reset(new BanditMechanism(std::move(arms), options.c));
  return true;
}

size_t BanditMechanism::Choose() const {
  // A pull still in flight (another worker's experiment, no result yet)
  // counts in the confidence bound but not in the mean: otherwise every
  // worker proposing at once would pull the same arm.
  std::vector<int> in_flight(arms_.size(), 0);
  for (const auto& [id, arm] : pending_) ++in_flight[arm];
  int total = 0;
  for (size_t i = 0; i < arms_.size(); ++i) {
    const int n = arms_[i].pulls + in_flight[i];
    if (n == 0) return i;
    total += n;
  }
  size_t best = 0;
  double best_score = -1;
  for (size_t i = 0; i < arms_.size(); ++i) {
    const BanditArm& a = arms_[i];
    const double mean = a.pulls > 0 ? a.reward / a.pulls : 0;
    const double score =
        mean + c_ * std::sqrt(2 * std::log(static_cast<double>(total)) / (a.pulls + in_flight[i]));
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return best;
}

bool BanditMechanism::DoBeforePropose(const LoopView& view, Guidance* guidance) {
  if (!GetHint(*guidance, "next").is_null()) return false;  // forced by another mechanism
  const size_t arm = Choose();
  pending_[view.next_id] = arm;
  for (const auto& [key, value] : arms_[arm].hints.items()) SetHint(guidance, key, value);
  if (!arms_[arm].text.empty()) guidance->text.push_back(arms_[arm].text);
  return true;
}

void BanditMechanism::DoOnResult(const LoopView&, const Experiment& result) {
  auto it = pending_.find(result.id);
  if (it == pending_.end()) return;
  BanditArm& a = arms_[it->second];
  pending_.erase(it);
  // A proposal that never ran (vetoed, no change) teaches nothing.
  if (result.status == Status::kRejected || result.status == Status::kNoChange ||
      result.status == Status::kInterrupted)
    return;
  ++a.pulls;
  if (result.status == Status::kKeep) a.reward += 1;
}

}  // namespace ratchet
