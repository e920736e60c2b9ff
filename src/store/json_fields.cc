#include "store/json_fields.h"

#include <cmath>

namespace ratchet {

using nlohmann::json;

json MetricsJson(const std::map<std::string, double>& metrics) {
  json out = json::object();
  for (const auto& [name, value] : metrics)
    out[name] = std::isfinite(value) ? json(value) : json(nullptr);
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
  };
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
