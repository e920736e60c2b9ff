#include "web/state_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "store/json_fields.h"

namespace ratchet {
namespace {

using nlohmann::json;

// Descriptions and logs come from proposers and programs: never let a
// stray byte make the whole answer fail.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Seven significant digits: what a table or a chart can show, and much
// shorter than a double's seventeen.
json Short(double v) {
  if (!std::isfinite(v)) return nullptr;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return std::strtod(buf, nullptr);
}

json Tenths(double v) { return std::round(v * 10) / 10; }

json Optional(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

json LiveObject(const LiveView& live) {
  if (!live.present) return nullptr;
  return {{"pid", live.pid},
          {"alive", live.alive},
          {"session_id", live.session_id},
          {"experiment_id", live.experiment_id},
          {"phase", live.phase},
          {"phase_started_at", live.phase_started_at},
          {"run_started_at", live.run_started_at},
          {"budget_s", live.budget_s},
          {"timeout_s", live.timeout_s},
          {"progress", live.progress},
          {"updated_at", live.updated_at},
          {"stop_reason", live.stop_reason}};
}


}  // namespace

std::string LiveJson(const LiveView& live) { return Dump(LiveObject(live)); }

std::string StateRowsMembers(const LoopSettings& settings, const LedgerView& ledger, int from_id) {
  // Metric names of the rows sent, by name; the primary metric is the
  // `metric` column and is not repeated among them.
  std::map<std::string, int> index;
  std::vector<std::string> names;
  for (const Experiment& e : ledger.experiments) {
    if (e.id < from_id) continue;
    for (const auto& m : e.metrics) {
      if (m.first == settings.metric_name) continue;
      if (index.emplace(m.first, static_cast<int>(names.size())).second) names.push_back(m.first);
    }
  }
  // Start times as tenths of a second after t0: half the characters.
  double t0 = 0;
  for (const Experiment& e : ledger.experiments) {
    if (e.id >= from_id && e.started_at > 0 && (t0 == 0 || e.started_at < t0)) t0 = e.started_at;
  }
  t0 = std::floor(t0);

  // Columns, not rows: ten arrays of 10,000 numbers parse much faster in the
  // browser than 10,000 small arrays, and phases and statuses are sent as
  // indexes into short name lists. Rare values (baseline, cost) are sparse.
  json id = json::array(), phase = json::array(), status = json::array(), metric = json::array(),
       desc = json::array(), start = json::array(), dur = json::array(), cost = json::array(),
       baseline = json::array();
  std::vector<json> metric_cols(names.size(), json::array());
  std::vector<std::string> phase_names, status_names;
  std::map<std::string, int> phase_index, status_index;
  auto code = [](const std::string& name, std::vector<std::string>* names,
                 std::map<std::string, int>* index) {
    auto [it, added] = index->emplace(name, static_cast<int>(names->size()));
    if (added) names->push_back(name);
    return it->second;
  };
  size_t n = 0;
  bool any_cost = false;
  for (const Experiment& e : ledger.experiments) {
    if (e.id < from_id) continue;
    ++n;
    id.push_back(e.id);
    phase.push_back(code(PhaseName(e.phase), &phase_names, &phase_index));
    status.push_back(code(StatusName(e.status), &status_names, &status_index));
    metric.push_back(e.metric ? Short(*e.metric) : json(nullptr));
    desc.push_back(e.description);
    start.push_back(e.started_at > 0 ? json(std::llround((e.started_at - t0) * 10))
                                     : json(nullptr));
    double duration = e.propose_s + e.build_s + e.run_s;
    if (duration <= 0 && e.finished_at > e.started_at) duration = e.finished_at - e.started_at;
    dur.push_back(Tenths(duration));
    any_cost = any_cost || e.usage.cost_usd != 0;
    cost.push_back(e.usage.cost_usd == 0 ? json(0) : Short(e.usage.cost_usd));
    if (e.baseline) baseline.push_back(e.id);
    for (json& col : metric_cols) col.push_back(nullptr);
    for (const auto& [name, value] : e.metrics) {
      if (name != settings.metric_name) metric_cols[index[name]].back() = Short(value);
    }
  }
  int total = ledger.experiments.empty() ? 0 : ledger.experiments.back().id;
  json cols = {{"id", std::move(id)},         {"phase", std::move(phase)},
               {"status", std::move(status)}, {"metric", std::move(metric)},
               {"desc", std::move(desc)},     {"start", std::move(start)},
               {"dur", std::move(dur)},       {"metrics", std::move(metric_cols)}};
  if (any_cost) cols["cost"] = std::move(cost);
  json members = {{"from", from_id},
                  {"total", total},
                  {"n", n},
                  {"t0", t0},
                  {"baseline_ids", std::move(baseline)},
                  {"phases", phase_names},
                  {"statuses", status_names},
                  {"metric_names", names},
                  {"cols", std::move(cols)}};
  std::string text = Dump(members);
  return text.substr(1, text.size() - 2);  // without the braces
}

std::string StateJson(const LoopSettings& settings, const LedgerView& ledger, const LiveView& live,
                      long long version, int from_id, double now, const std::string& rows_members) {
  json loop = {{"name", settings.name},
               {"metric", settings.metric_name},
               {"goal", settings.minimize ? "min" : "max"},
               {"target", Optional(settings.target)},
               {"budget_s", settings.budget_s},
               {"timeout_s", settings.timeout_s},
               {"max_experiments",
                settings.max_experiments ? json(*settings.max_experiments) : json(nullptr)},
               {"wall_s", Optional(settings.wall_s)},
               {"max_cost_usd", Optional(settings.max_cost_usd)},
               {"curve_key", settings.curve_key}};
  json sessions = json::array();
  for (const Session& s : ledger.sessions) {
    sessions.push_back({s.id, s.started_at, s.ended_at, s.stop_reason});
  }
  json head = {{"v", 1},
               {"version", version},
               {"now", now},
               {"loop", std::move(loop)},
               {"sessions", std::move(sessions)},
               {"live", LiveObject(live)}};
  std::string text = Dump(head);
  text.pop_back();  // the closing brace: the rows follow
  text += ',';
  text += rows_members.empty() ? StateRowsMembers(settings, ledger, from_id) : rows_members;
  text += '}';
  return text;
}

std::string DetailJson(const ExperimentDetail& d) {
  const Experiment& e = d.experiment;
  json runs = json::array();
  for (const RunRecord& r : d.runs) {
    runs.push_back({{"attempt", r.attempt},
                    {"purpose", r.purpose},
                    {"exit_code", r.exit_code},
                    {"signal", r.signal},
                    {"timed_out", r.timed_out},
                    {"wall_s", r.wall_s},
                    {"metric", r.metric ? json(*r.metric) : json(nullptr)},
                    {"metrics", MetricsJson(r.metrics)},
                    {"curve", CurveJson(r.curve)}});
  }
  json exp = ExperimentJson(e);
  json out = {{"experiment", std::move(exp)},
              {"runs", std::move(runs)},
              {"reference", d.reference_id == 0
                                ? json(nullptr)
                                : json{{"id", d.reference_id}, {"curve", CurveJson(d.reference_curve)}}},
              {"diff",
               {{"text", d.diff},
                {"error", d.diff_error.empty() ? json(nullptr) : json(d.diff_error)},
                {"truncated", d.diff_truncated}}},
              {"log",
               {{"path", e.log_path},
                {"text", d.log},
                {"error", d.log_error.empty() ? json(nullptr) : json(d.log_error)},
                {"truncated", d.log_truncated}}}};
  return Dump(out);
}

}  // namespace ratchet
