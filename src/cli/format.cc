#include "cli/format.h"

#include <cmath>
#include <cstdio>

#include "core/accept.h"

namespace ratchet {

std::string FormatDuration(double seconds) {
  char buf[64];
  long s = std::lround(seconds);
  if (seconds < 60) std::snprintf(buf, sizeof buf, "%.0fs", seconds);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

std::string Short(const std::string& sha) { return sha.substr(0, 7); }

std::string ExperimentLine(const Experiment& e, const Experiment* before, const LoopConfig*,
                           const std::string& metric_name) {
  char head[64];
  std::snprintf(head, sizeof head, "#%-4d %-15s", e.id, StatusName(e.status));
  std::string line = head;
  char metric[96];
  if (e.metric) {
    std::snprintf(metric, sizeof metric, "%s=%-10s", metric_name.c_str(),
                  FormatMetric(*e.metric).c_str());
    line += metric;
    if (before && before->metric && !e.baseline) {
      double delta = *e.metric - *before->metric;
      std::snprintf(metric, sizeof metric, " %+10.4g", delta);
      line += metric;
    } else {
      line += std::string(11, ' ');
    }
  } else {
    std::snprintf(metric, sizeof metric, "%s=%-10s", metric_name.c_str(), "-");
    line += metric;
    line += std::string(11, ' ');
  }
  double took = e.finished_at > e.started_at ? e.finished_at - e.started_at : 0;
  char dur[32];
  std::snprintf(dur, sizeof dur, " %6s  ", FormatDuration(took).c_str());
  line += dur;
  line += e.description.empty() ? "(no description)" : e.description;
  if (e.status != Status::kKeep && e.status != Status::kDiscard && !e.reason.empty())
    line += "  [" + e.reason + "]";
  return line;
}

}  // namespace ratchet
