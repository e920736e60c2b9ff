#include "exec/step_wire.h"

#include <nlohmann/json.hpp>

namespace ratchet {
namespace {

using nlohmann::json;

json MountToJson(const Mount& m) {
  return {{"source", m.source},
          {"target", m.target},
          {"kind", static_cast<int>(m.kind)},
          {"optional", m.optional}};
}

Mount MountFromJson(const json& j) {
  Mount m;
  m.source = j.value("source", "");
  m.target = j.value("target", "");
  const int kind = j.value("kind", 0);
  if (kind < 0 || kind > static_cast<int>(Mount::Kind::kHidden))
    throw std::invalid_argument("unknown mount kind " + std::to_string(kind));
  m.kind = static_cast<Mount::Kind>(kind);
  m.optional = j.value("optional", false);
  return m;
}

// Parses `text` and hands the object to `read`; every type mismatch or
// missing member is a nlohmann exception, caught here: a damaged file is an
// error message, never a crash of the node's ratchet or the submitter.
template <typename Read>
bool ParseWith(const std::string& text, const char* what, std::string* err, Read read) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) {
    *err = std::string("the ") + what + " is not a JSON object";
    return false;
  }
  try {
    read(j);
  } catch (const std::exception& e) {
    *err = std::string("the ") + what + " is damaged: " + e.what();
    return false;
  }
  return true;
}

}  // namespace

std::string RunSpecToJson(const RunSpec& spec) {
  json env = json::array();
  for (const auto& [name, value] : spec.env) env.push_back({name, value});
  json mounts = json::array();
  for (const Mount& m : spec.sandbox.mounts) mounts.push_back(MountToJson(m));
  json j = {
      {"argv", spec.argv},
      {"cwd", spec.cwd},
      {"env", env},
      {"drop_secret_env", spec.drop_secret_env},
      {"timeout_s", spec.timeout_s},
      {"grace_s", spec.grace_s},
      {"stop_signal", spec.stop_signal},
      {"log_path", spec.log_path},
      {"log_limit_bytes", spec.log_limit_bytes},
      {"sandbox",
       {{"enabled", spec.sandbox.enabled},
        {"mounts", mounts},
        {"home", spec.sandbox.home},
        {"network", spec.sandbox.network},
        {"nested_namespaces", spec.sandbox.nested_namespaces}}},
      {"limits",
       {{"memory_bytes", spec.limits.memory_bytes},
        {"pids", spec.limits.pids},
        {"file_bytes", spec.limits.file_bytes}}},
      {"readonly_paths", spec.readonly_paths},
      {"tail_bytes", spec.tail_bytes},
  };
  if (spec.stdin_data) j["stdin"] = *spec.stdin_data;
  // Never throws: bytes that are not UTF-8 are replaced (batch steps' paths
  // and variables are text; none has stdin).
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

bool RunSpecFromJson(const std::string& text, RunSpec* spec, std::string* err) {
  RunSpec s;
  if (!ParseWith(text, "step file", err, [&](const json& j) {
        s.argv = j.at("argv").get<std::vector<std::string>>();
        s.cwd = j.value("cwd", "");
        for (const json& pair : j.value("env", json::array()))
          s.env.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
        s.drop_secret_env = j.value("drop_secret_env", false);
        s.timeout_s = j.value("timeout_s", 0.0);
        s.grace_s = j.value("grace_s", 5.0);
        s.stop_signal = j.value("stop_signal", 15);
        s.log_path = j.value("log_path", "");
        s.log_limit_bytes = j.value("log_limit_bytes", s.log_limit_bytes);
        if (j.contains("stdin")) s.stdin_data = j.at("stdin").get<std::string>();
        const json& box = j.at("sandbox");
        s.sandbox.enabled = box.value("enabled", false);
        for (const json& m : box.value("mounts", json::array()))
          s.sandbox.mounts.push_back(MountFromJson(m));
        s.sandbox.home = box.value("home", "");
        s.sandbox.network = box.value("network", false);
        s.sandbox.nested_namespaces = box.value("nested_namespaces", false);
        const json& limits = j.at("limits");
        s.limits.memory_bytes = limits.value("memory_bytes", uint64_t{0});
        s.limits.pids = limits.value("pids", uint64_t{0});
        s.limits.file_bytes = limits.value("file_bytes", uint64_t{0});
        s.readonly_paths = j.value("readonly_paths", std::vector<std::string>{});
        s.tail_bytes = j.value("tail_bytes", s.tail_bytes);
      }))
    return false;
  if (s.argv.empty()) {
    *err = "the step file has no command (argv is empty)";
    return false;
  }
  *spec = std::move(s);
  return true;
}

std::string RunResultToJson(const RunResult& r) {
  json j = {
      {"end", static_cast<int>(r.end)},
      {"exit_code", r.exit_code},
      {"signal", r.signal},
      {"limit", static_cast<int>(r.limit)},
      {"wall_s", r.wall_s},
      {"cpu_s", r.cpu_s},
      {"peak_rss_mb", r.peak_rss_mb},
      {"output_bytes", r.output_bytes},
      {"output_truncated", r.output_truncated},
      {"sandboxed", r.sandboxed},
      {"containment", r.containment},
      {"limits_enforced", r.limits_enforced},
      // The tail is raw output: invalid UTF-8 is replaced, not refused.
      {"tail", r.tail},
      {"error", r.error},
  };
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

bool RunResultFromJson(const std::string& text, RunResult* result, std::string* err) {
  RunResult r;
  if (!ParseWith(text, "result file", err, [&](const json& j) {
        const int end = j.at("end").get<int>();
        if (end < 0 || end > static_cast<int>(RunResult::End::kLimit))
          throw std::invalid_argument("unknown end " + std::to_string(end));
        r.end = static_cast<RunResult::End>(end);
        r.exit_code = j.value("exit_code", -1);
        r.signal = j.value("signal", 0);
        const int limit = j.value("limit", 0);
        if (limit < 0 || limit > static_cast<int>(RunResult::Limit::kFileSize))
          throw std::invalid_argument("unknown limit " + std::to_string(limit));
        r.limit = static_cast<RunResult::Limit>(limit);
        r.wall_s = j.value("wall_s", 0.0);
        r.cpu_s = j.value("cpu_s", 0.0);
        r.peak_rss_mb = j.value("peak_rss_mb", 0.0);
        r.output_bytes = j.value("output_bytes", uint64_t{0});
        r.output_truncated = j.value("output_truncated", false);
        r.sandboxed = j.value("sandboxed", false);
        r.containment = j.value("containment", "");
        r.limits_enforced = j.value("limits_enforced", true);
        r.tail = j.value("tail", "");
        r.error = j.value("error", "");
      }))
    return false;
  *result = std::move(r);
  return true;
}

}  // namespace ratchet
