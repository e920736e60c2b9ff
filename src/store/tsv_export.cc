#include "store/tsv_export.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "store/json_fields.h"

namespace ratchet {
namespace {

/// Non-finite values print as 0 like missing ones: readers expect numbers.
std::string Fixed(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string OneLine(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

double MemoryGb(const Experiment& e) {
  for (const char* key : {"peak_mem_mb", "peak_vram_mb"}) {
    auto it = e.metrics.find(key);
    if (it != e.metrics.end()) return it->second / 1024.0;
  }
  return e.peak_rss_mb / 1024.0;
}

}  // namespace

std::string ResultsTsv(const std::vector<Experiment>& experiments, const std::string& metric_name) {
  std::set<std::string> others;
  for (const Experiment& e : experiments)
    for (const auto& [name, value] : e.metrics)
      // ratchet's own measurements (run.wall_s, ...) are in the JSON export.
      if (name != metric_name && name.rfind("run.", 0) != 0) others.insert(name);

  std::string out = "commit\t" + metric_name + "\tmemory_gb\tstatus\tdescription";
  for (const std::string& name : others) out += "\t" + name;
  out += "\n";
  for (const Experiment& e : experiments) {
    if (e.status == Status::kNone) continue;  // still running: not a result yet
    const std::string& commit =
        !e.candidate_commit.empty() ? e.candidate_commit : (e.baseline ? e.parent_commit : "");
    out += commit.substr(0, 7);
    out += '\t' + Fixed(e.metric.value_or(0.0), 6);
    out += '\t' + Fixed(MemoryGb(e), 1);
    out += '\t' + std::string(StatusName(e.status));
    out += '\t' + OneLine(e.description);
    for (const std::string& name : others) {
      auto it = e.metrics.find(name);
      out += '\t' + Fixed(it == e.metrics.end() ? 0.0 : it->second, 6);
    }
    out += "\n";
  }
  return out;
}

std::string ExperimentsToJson(const std::vector<Experiment>& experiments) {
  if (experiments.empty()) return "[]";
  std::string out = "[\n";
  for (size_t i = 0; i < experiments.size(); ++i) {
    out += DumpJson(ExperimentJson(experiments[i]));
    out += i + 1 < experiments.size() ? ",\n" : "\n";
  }
  return out + "]";
}

}  // namespace ratchet
