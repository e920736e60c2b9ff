#include "core/stop.h"

#include <cstdio>

#include "core/accept.h"

namespace ratchet {

int ExperimentsSinceBest(const std::vector<Experiment>& history) {
  int count = 0;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->status == Status::kKeep) break;
    ++count;
  }
  return count;
}

int ConsecutiveFailures(const std::vector<Experiment>& history) {
  int count = 0;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->status == Status::kInterrupted) continue;
    if (!IsFailureStatus(it->status)) break;
    ++count;
  }
  return count;
}

Usage TotalUsage(const std::vector<Experiment>& history) {
  Usage total;
  for (const Experiment& e : history) {
    total.input_tokens += e.usage.input_tokens;
    total.output_tokens += e.usage.output_tokens;
    total.cost_usd += e.usage.cost_usd;
  }
  return total;
}

namespace {

std::string Seconds(double s) {
  char buf[64];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
  else std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}

}  // namespace

std::string CheckStop(const StopInput& in, const LoopConfig& c) {
  const std::vector<Experiment>& history = *in.history;
  if (in.interrupts > 0) return "stopped by the user (Ctrl-C)";
  if (c.max_experiments && static_cast<int>(history.size()) + in.in_flight >= *c.max_experiments)
    return "reached stop.max_experiments (" + std::to_string(*c.max_experiments) + ")";
  if (c.target && in.incumbent && in.incumbent->metric &&
      !c.Better(*c.target, *in.incumbent->metric))
    return "reached stop.target " + FormatMetric(*c.target) + ": " + c.metric_name + " " +
           FormatMetric(*in.incumbent->metric) + " at #" + std::to_string(in.incumbent->id);
  if (c.wall_s && in.elapsed_wall_s >= *c.wall_s)
    return "used stop.wall (" + Seconds(*c.wall_s) + ")";
  if (c.patience && in.incumbent && ExperimentsSinceBest(history) >= *c.patience)
    return "stop.patience: " + std::to_string(*c.patience) + " experiments without a new best";
  Usage usage = TotalUsage(history);
  if (c.max_cost_usd && usage.cost_usd >= *c.max_cost_usd) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "spent $%.2f of stop.cost_usd $%.2f", usage.cost_usd,
                  *c.max_cost_usd);
    return buf;
  }
  if (c.max_tokens && usage.input_tokens + usage.output_tokens >= *c.max_tokens)
    return "used " + std::to_string(usage.input_tokens + usage.output_tokens) +
           " tokens of stop.tokens " + std::to_string(*c.max_tokens);
  if (c.max_consecutive_failures && ConsecutiveFailures(history) >= *c.max_consecutive_failures) {
    const Experiment& last = history.back();
    return "circuit breaker: " + std::to_string(*c.max_consecutive_failures) +
           " failed experiments in a row (last: #" + std::to_string(last.id) + " " +
           StatusName(last.status) + ": " + last.reason + ")";
  }
  return "";
}

}  // namespace ratchet
