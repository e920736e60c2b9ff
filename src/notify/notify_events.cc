#include "notify/notify_events.h"

#include <nlohmann/json.hpp>

#include "core/accept.h"

namespace ratchet {
namespace {

constexpr NotifyKind kKinds[] = {NotifyKind::kNewBest, NotifyKind::kStop,
                                 NotifyKind::kCircuitBreaker, NotifyKind::kBaselineFailed};

std::string MetricText(const Experiment& e) {
  return e.metric ? FormatMetric(*e.metric) : std::string("-");
}

nlohmann::json ExperimentJson(const Experiment& e) {
  nlohmann::json j = {{"id", e.id},
                      {"status", StatusName(e.status)},
                      {"description", e.description},
                      {"commit", e.candidate_commit}};
  j["metric"] = e.metric ? nlohmann::json(*e.metric) : nlohmann::json(nullptr);
  if (!e.metrics.empty()) j["metrics"] = e.metrics;
  return j;
}

// Invalid UTF-8 (a description is whatever a proposer printed) becomes U+FFFD
// rather than an exception.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

const char* NotifyKindName(NotifyKind kind) {
  switch (kind) {
    case NotifyKind::kNewBest: return "new_best";
    case NotifyKind::kStop: return "stop";
    case NotifyKind::kCircuitBreaker: return "circuit_breaker";
    case NotifyKind::kBaselineFailed: return "baseline_failed";
  }
  return "?";
}

bool ParseNotifyKind(const std::string& name, NotifyKind* kind) {
  for (NotifyKind k : kKinds) {
    if (name == NotifyKindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

std::set<NotifyKind> AllNotifyKinds() { return std::set<NotifyKind>(std::begin(kKinds), std::end(kKinds)); }

std::string NotifyKindNames() {
  std::string names;
  for (NotifyKind k : kKinds) names += (names.empty() ? "" : ", ") + std::string(NotifyKindName(k));
  return names;
}

void NotifyEvents::Seed(const Experiment* best) {
  if (best) best_ = *best;
}

std::string NotifyEvents::Prefix() const { return "ratchet " + loop_.tag + ": "; }

std::string NotifyEvents::BestText() const {
  if (!best_) return "no result yet";
  return "best #" + std::to_string(best_->id) + " " + loop_.metric_name + " " +
         MetricText(*best_) + (best_->baseline ? " (the baseline)" : ": " + best_->description);
}

std::vector<NotifyEvent> NotifyEvents::OnFinished(const Experiment& exp,
                                                  const Experiment* incumbent, double now) {
  std::vector<NotifyEvent> out;
  std::optional<Experiment> before = best_;
  if (incumbent) best_ = *incumbent;
  if (exp.baseline && exp.status != Status::kKeep && exp.status != Status::kInterrupted) {
    NotifyEvent e;
    e.kind = NotifyKind::kBaselineFailed;
    e.experiment = exp;
    e.reason = std::string(StatusName(exp.status)) + ": " + exp.reason;
    e.text = Prefix() + "the baseline failed (" + e.reason + "); the loop cannot start";
    e.at = now;
    out.push_back(std::move(e));
  }
  if (!exp.baseline && exp.status == Status::kKeep) {
    NotifyEvent e;
    e.kind = NotifyKind::kNewBest;
    e.experiment = exp;
    if (before && before->metric) e.previous_best = *before->metric;
    e.text = Prefix() + "new best #" + std::to_string(exp.id) + " " + loop_.metric_name + " " +
             MetricText(exp);
    if (e.previous_best) e.text += " (was " + FormatMetric(*e.previous_best) + ")";
    e.text += ": " + exp.description;
    e.at = now;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<NotifyEvent> NotifyEvents::OnStop(const std::string& reason, double now) {
  NotifyEvent e;
  const bool breaker = reason.rfind("circuit breaker", 0) == 0;
  e.kind = breaker ? NotifyKind::kCircuitBreaker : NotifyKind::kStop;
  e.reason = reason;
  e.experiment = best_;
  e.text = Prefix() + (breaker ? "stopped by the " : "stopped: ") + reason + "; " + BestText();
  e.at = now;
  return {e};
}

std::string SlackBody(const NotifyEvent& event) {
  return Dump(nlohmann::json{{"text", event.text}});
}

std::string JsonBody(const NotifyEvent& event, const LoopIdentity& loop) {
  nlohmann::json j = {{"event", NotifyKindName(event.kind)},
                      {"loop", loop.tag},
                      {"dir", loop.dir},
                      {"metric", loop.metric_name},
                      {"goal", loop.minimize ? "min" : "max"},
                      {"text", event.text},
                      {"at", event.at}};
  if (event.experiment) {
    j[event.kind == NotifyKind::kStop || event.kind == NotifyKind::kCircuitBreaker ? "best"
                                                                                   : "experiment"] =
        ExperimentJson(*event.experiment);
  }
  if (event.previous_best) j["previous_best"] = *event.previous_best;
  if (!event.reason.empty()) j["reason"] = event.reason;
  return Dump(j);
}

}  // namespace ratchet
