#include "store/json_fields.h"

#include <cmath>
#include <optional>

namespace ratchet {

using nlohmann::json;

json MetricsJson(const std::map<std::string, double>& metrics) {
  json out = json::object();
  for (const auto& [name, value] : metrics)
    out[name] = std::isfinite(value) ? json(value) : json(nullptr);
  return out;
}

json CurveJson(const Curve& curve) {
  json out = json::array();
  for (const CurvePoint& p : curve) out.push_back(json{{"t", p.t}, {"v", MetricsJson(p.values)}});
  return out;
}

json UsageJson(const Usage& usage) {
  return json{{"input_tokens", usage.input_tokens},
              {"output_tokens", usage.output_tokens},
              {"cost_usd", usage.cost_usd}};
}

json ExperimentJson(const Experiment& e) {
  json params = nullptr;
  if (!e.params_json.empty()) {
    params = json::parse(e.params_json, nullptr, /*allow_exceptions=*/false);
    if (params.is_discarded()) params = e.params_json;  // keep what was recorded
  }
  return json{
      {"id", e.id},
      {"session_id", e.session_id},
      {"phase", PhaseName(e.phase)},
      {"status", StatusName(e.status)},
      {"reason", e.reason},
      {"baseline", e.baseline},
      {"parent_commit", e.parent_commit},
      {"candidate_commit", e.candidate_commit},
      {"proposer", e.proposer},
      {"description", e.description},
      {"hypothesis", e.hypothesis},
      {"params", params},
      {"metric", e.metric && std::isfinite(*e.metric) ? json(*e.metric) : json(nullptr)},
      {"metric_stddev", e.metric_stddev},
      {"metric_n", e.metric_n},
      {"metrics", MetricsJson(e.metrics)},
      {"started_at", e.started_at},
      {"finished_at", e.finished_at},
      {"propose_s", e.propose_s},
      {"build_s", e.build_s},
      {"run_s", e.run_s},
      {"cpu_s", e.cpu_s},
      {"peak_rss_mb", e.peak_rss_mb},
      {"exit_code", e.exit_code},
      {"signal", e.signal},
      {"diff_stat", e.diff_stat},
      {"files_changed", e.files_changed},
      {"log_path", e.log_path},
      {"usage", UsageJson(e.usage)},
      {"mechanisms", e.mechanisms},
      {"tried_commit", e.tried_commit},
      {"claims", MetricsJson(e.claims)},
      {"warnings", e.warnings},
      {"worker", e.worker},
  };
}

json RunJson(const RunRecord& r) {
  json out{
      {"experiment_id", r.experiment_id},
      {"attempt", r.attempt},
      {"purpose", r.purpose},
      {"exit_code", r.exit_code},
      {"signal", r.signal},
      {"timed_out", r.timed_out},
      {"wall_s", r.wall_s},
      {"cpu_s", r.cpu_s},
      {"peak_rss_mb", r.peak_rss_mb},
      {"metric", r.metric && std::isfinite(*r.metric) ? json(*r.metric) : json(nullptr)},
      {"metrics", MetricsJson(r.metrics)},
      {"claims", MetricsJson(r.claims)},
      {"containment", r.containment},
      {"sandboxed", r.sandboxed},
      {"verify_s", r.verify_s},
      {"log_path", r.log_path},
  };
  // Only when there is one: a run journaled before curves existed reads the same.
  if (!r.curve.empty()) out["curve"] = CurveJson(r.curve);
  return out;
}

json SessionJson(const Session& s) {
  return json{{"id", s.id},
              {"pid", s.pid},
              {"started_at", s.started_at},
              {"ended_at", s.ended_at},
              {"stop_reason", s.stop_reason}};
}

namespace {

// Reads j[key] into *out when it has the right type; false otherwise.
template <typename T>
bool Get(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

bool GetOptional(const json& j, const char* key, std::optional<double>* out) {
  auto it = j.find(key);
  if (it == j.end()) return false;
  if (it->is_null()) {
    out->reset();
    return true;
  }
  if (!it->is_number()) return false;
  *out = it->get<double>();
  return true;
}

bool GetMetrics(const json& j, const char* key, std::map<std::string, double>* out) {
  auto it = j.find(key);
  return it != j.end() && ParseMetricsJson(it->dump(), out);
}

}  // namespace

bool ExperimentFromJson(const json& j, Experiment* e) {
  if (!j.is_object()) return false;
  std::string phase, status;
  json params = j.value("params", json(nullptr));
  e->params_json = params.is_null() ? "" : params.is_string() ? params.get<std::string>()
                                                               : params.dump();
  auto usage = j.find("usage");
  return Get(j, "id", &e->id) && Get(j, "session_id", &e->session_id) &&
         Get(j, "phase", &phase) && ParsePhase(phase, &e->phase) && Get(j, "status", &status) &&
         ParseStatus(status, &e->status) && Get(j, "reason", &e->reason) &&
         Get(j, "baseline", &e->baseline) && Get(j, "parent_commit", &e->parent_commit) &&
         Get(j, "candidate_commit", &e->candidate_commit) && Get(j, "proposer", &e->proposer) &&
         Get(j, "description", &e->description) && Get(j, "hypothesis", &e->hypothesis) &&
         GetOptional(j, "metric", &e->metric) && Get(j, "metric_stddev", &e->metric_stddev) &&
         Get(j, "metric_n", &e->metric_n) && GetMetrics(j, "metrics", &e->metrics) &&
         Get(j, "started_at", &e->started_at) && Get(j, "finished_at", &e->finished_at) &&
         Get(j, "propose_s", &e->propose_s) && Get(j, "build_s", &e->build_s) &&
         Get(j, "run_s", &e->run_s) && Get(j, "cpu_s", &e->cpu_s) &&
         Get(j, "peak_rss_mb", &e->peak_rss_mb) && Get(j, "exit_code", &e->exit_code) &&
         Get(j, "signal", &e->signal) && Get(j, "diff_stat", &e->diff_stat) &&
         Get(j, "files_changed", &e->files_changed) && Get(j, "log_path", &e->log_path) &&
         usage != j.end() && ParseUsageJson(usage->dump(), &e->usage) &&
         Get(j, "mechanisms", &e->mechanisms) && Get(j, "tried_commit", &e->tried_commit) &&
         GetMetrics(j, "claims", &e->claims) && Get(j, "warnings", &e->warnings) &&
         Get(j, "worker", &e->worker);
}

bool RunFromJson(const json& j, RunRecord* r) {
  return j.is_object() && Get(j, "experiment_id", &r->experiment_id) &&
         Get(j, "attempt", &r->attempt) && Get(j, "purpose", &r->purpose) &&
         Get(j, "exit_code", &r->exit_code) && Get(j, "signal", &r->signal) &&
         Get(j, "timed_out", &r->timed_out) && Get(j, "wall_s", &r->wall_s) &&
         Get(j, "cpu_s", &r->cpu_s) && Get(j, "peak_rss_mb", &r->peak_rss_mb) &&
         GetOptional(j, "metric", &r->metric) && GetMetrics(j, "metrics", &r->metrics) &&
         GetMetrics(j, "claims", &r->claims) && Get(j, "containment", &r->containment) &&
         Get(j, "sandboxed", &r->sandboxed) && Get(j, "verify_s", &r->verify_s) &&
         Get(j, "log_path", &r->log_path) &&
         (!j.contains("curve") || ParseCurveJson(j["curve"].dump(), &r->curve));
}

bool SessionFromJson(const json& j, Session* s) {
  return j.is_object() && Get(j, "id", &s->id) && Get(j, "pid", &s->pid) &&
         Get(j, "started_at", &s->started_at) && Get(j, "ended_at", &s->ended_at) &&
         Get(j, "stop_reason", &s->stop_reason);
}

std::string DumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

bool ParseMetricsJson(const std::string& text, std::map<std::string, double>* metrics) {
  metrics->clear();
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return false;
  for (const auto& [name, value] : j.items()) {
    if (value.is_null()) continue;
    if (!value.is_number()) return false;
    (*metrics)[name] = value.get<double>();
  }
  return true;
}

bool ParseCurveJson(const std::string& text, Curve* curve) {
  curve->clear();
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return false;
  for (const json& p : j) {
    if (!p.is_object() || !p.contains("t") || !p["t"].is_number() || !p.contains("v") ||
        !p["v"].is_object())
      return false;
    CurvePoint point;
    point.t = p["t"].get<double>();
    for (const auto& [name, value] : p["v"].items()) {
      if (value.is_null()) point.values[name] = std::nan("");  // NaN is what the run printed
      else if (value.is_number()) point.values[name] = value.get<double>();
      else return false;
    }
    curve->push_back(std::move(point));
  }
  return true;
}

bool ParseUsageJson(const std::string& text, Usage* usage) {
  *usage = Usage{};
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return false;
  auto number = [&](const char* key, auto* out) {
    auto it = j.find(key);
    if (it == j.end()) return true;  // absent: zero
    if (!it->is_number()) return false;
    *out = it->get<std::remove_pointer_t<decltype(out)>>();
    return true;
  };
  return number("input_tokens", &usage->input_tokens) &&
         number("output_tokens", &usage->output_tokens) && number("cost_usd", &usage->cost_usd);
}

bool ParseStringsJson(const std::string& text, std::vector<std::string>* strings) {
  strings->clear();
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return false;
  for (const json& s : j) {
    if (!s.is_string()) return false;
    strings->push_back(s.get<std::string>());
  }
  return true;
}

}  // namespace ratchet
