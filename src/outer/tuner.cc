#include "outer/tuner.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "outer/search_points.h"

namespace ratchet {

namespace {

constexpr double kDefaultExploration = 0.5, kDefaultStep = 0.1, kMinStep = 0.005;
constexpr double kExplorationStep = 0.25;
constexpr int kFreezeAfter = 4;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Percent(double v) { return Num(100 * v) + "%"; }

std::string Opt(const std::optional<double>& v) { return v ? Num(*v) : "default"; }

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string DescribeChange(const TunerSettings& a, const TunerSettings& b) {
  std::vector<std::string> parts;
  if (a.exploration != b.exploration)
    parts.push_back("exploration " + Opt(a.exploration) + " -> " + Opt(b.exploration));
  if (a.step != b.step) parts.push_back("step " + Opt(a.step) + " -> " + Opt(b.step));
  if (a.frozen != b.frozen)
    parts.push_back(b.frozen.empty() ? "every parameter free" : "frozen " + Join(b.frozen));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string TunerSettingsJson(const TunerSettings& s) {
  nlohmann::json j = nlohmann::json::object();
  if (s.exploration) j["exploration"] = *s.exploration;
  if (s.step) j["step"] = *s.step;
  if (!s.frozen.empty()) j["frozen"] = s.frozen;
  if (!s.text.empty()) j["text"] = s.text;
  return j.dump();
}

TunerDecision TunerMechanism::Adjust(const TraceStats& w, const LoopView& view) {
  TunerSettings next = settings_;
  const double exploration = settings_.exploration.value_or(kDefaultExploration);
  std::string reason;
  const bool stuck = w.window > 0 && w.since_best >= context_.schedule.stuck_after &&
                     SearchIsLocal(context_, view, w.since_best);
  if (w.window == 0) {
    reason = "no experiments in the window yet";
  } else if (w.crash_rate >= 0.5) {
    if (context_.space)
      next.step = std::max(kMinStep, settings_.step.value_or(kDefaultStep) * 0.5);
    next.exploration = std::max(0.0, exploration - kExplorationStep);
    next.text = "Many recent experiments crashed: make smaller, safer changes.";
    reason = Percent(w.crash_rate) + " of the last " + std::to_string(w.window) +
             " experiments crashed: smaller steps, less exploration";
  } else if (stuck) {
    next.exploration = std::min(1.0, exploration + kExplorationStep);
    next.frozen.clear();
    next.text = "No improvement in the last " + std::to_string(w.since_best) +
                " experiments: explore more widely.";
    reason = "no improvement in the last " + std::to_string(w.since_best) +
             " experiments: explore more, every parameter free";
  } else if (w.repeat_rate >= 0.3) {
    next.exploration = std::min(1.0, exploration + kExplorationStep);
    next.text = "Recent proposals repeat earlier ones: try something not tried before.";
    reason = Percent(w.repeat_rate) + " of the last " + std::to_string(w.window) +
             " proposals repeat earlier ones: explore more";
  } else if (w.keep_rate >= 0.4) {
    next.exploration = std::max(0.0, exploration - kExplorationStep);
    next.text = "Recent changes improve often: refine the current best with small changes.";
    reason = Percent(w.keep_rate) + " of the last " + std::to_string(w.window) +
             " experiments were kept: exploit, less exploration";
  } else {
    // Nothing calls for a setting: drift back to the search's own.
    if (next.exploration) {
      const double e = *next.exploration;
      next.exploration = e > kDefaultExploration
                             ? std::max(kDefaultExploration, e - kExplorationStep)
                             : std::min(kDefaultExploration, e + kExplorationStep);
      if (*next.exploration == kDefaultExploration) next.exploration.reset();
    }
    next.step.reset();
    next.text.clear();
    reason = "steady: " + Percent(w.keep_rate) + " kept, " + Percent(w.crash_rate) +
             " crashed in the last " + std::to_string(w.window);
    if (!(next == settings_)) reason += "; back toward the search's own settings";
  }

  // Parameters that keep failing while others improve are set aside.
  if (context_.space && !stuck && w.window > 0) {
    bool others_kept = false;
    for (const auto& [name, c] : w.params) others_kept = others_kept || c.keeps > 0;
    std::vector<std::string> freeze;
    for (const auto& [name, c] : w.params) {
      if (c.tried >= kFreezeAfter && c.keeps == 0 && others_kept &&
          std::find(next.frozen.begin(), next.frozen.end(), name) == next.frozen.end())
        freeze.push_back(name);
    }
    const size_t limit = context_.space->size() / 2;
    for (const std::string& name : freeze) {
      if (next.frozen.size() >= limit) break;
      next.frozen.push_back(name);
    }
    if (next.frozen.size() > settings_.frozen.size())
      reason += "; freeze " + Join(freeze) + ": changed " + std::to_string(kFreezeAfter) +
                "+ times without a keep while other parameters improved";
  }

  TunerDecision d;
  d.change = DescribeChange(settings_, next);
  d.changed = !d.change.empty();
  if (!d.changed) d.change = "no change";
  d.reason = reason;
  settings_ = next;
  d.settings = settings_;
  return d;
}

bool TunerMechanism::DoBeforePropose(const LoopView&, Guidance* guidance) {
  bool acted = false;
  if (context_.space) {
    if (!GetHint(*guidance, "next").is_null()) return false;
    if (settings_.exploration) SetHint(guidance, "exploration", *settings_.exploration), acted = true;
    if (settings_.step) SetHint(guidance, "step", *settings_.step), acted = true;
    if (!settings_.frozen.empty()) SetHint(guidance, "frozen", settings_.frozen), acted = true;
  } else if (!settings_.text.empty()) {
    guidance->text.push_back(settings_.text);
    acted = true;
  }
  return acted;
}

}  // namespace ratchet
