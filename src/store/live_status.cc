#include "store/live_status.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/durable_file.h"
#include "base/read_file.h"
#include "store/json_fields.h"

namespace ratchet {

using nlohmann::json;

std::string LiveStatusJson(const LiveStatus& s) {
  json j = {
      {"pid", s.pid},
      {"session_id", s.session_id},
      {"experiment_id", s.experiment_id},
      {"phase", s.phase},
      {"phase_started_at", s.phase_started_at},
      {"run_started_at", s.run_started_at},
      {"budget_s", s.budget_s},
      {"timeout_s", s.timeout_s},
      {"progress", s.progress},
      {"updated_at", s.updated_at},
      {"stop_reason", s.stop_reason},
  };
  return DumpJson(j, 2) + "\n";
}

bool ParseLiveStatus(const std::string& text, LiveStatus* s) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  *s = LiveStatus{};
  bool ok = true;
  auto field = [&](const char* key, auto* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    using T = std::remove_pointer_t<decltype(out)>;
    if constexpr (std::is_same_v<T, std::string>) {
      if (it->is_string())
        *out = it->template get<std::string>();
      else
        ok = false;
    } else {
      if (it->is_number())
        *out = it->template get<T>();
      else
        ok = false;
    }
  };
  field("pid", &s->pid);
  field("session_id", &s->session_id);
  field("experiment_id", &s->experiment_id);
  field("phase", &s->phase);
  field("phase_started_at", &s->phase_started_at);
  field("run_started_at", &s->run_started_at);
  field("budget_s", &s->budget_s);
  field("timeout_s", &s->timeout_s);
  field("progress", &s->progress);
  field("updated_at", &s->updated_at);
  field("stop_reason", &s->stop_reason);
  return ok;
}

bool WriteLiveStatus(const std::string& path, const LiveStatus& live, std::string* err) {
  // Rewritten on every phase and progress line: atomic for the dashboard,
  // not synced (a hint, never read back after a crash).
  ReplaceOptions options;
  options.mode = 0644u;
  options.durable = false;
  return ReplaceFile(path, LiveStatusJson(live), err, options);
}

bool ReadLiveStatus(const std::string& path, LiveStatus* live, std::string* err) {
  std::string text;
  if (!ReadWholeFile(path, &text)) {
    *err = "no live status at " + path;
    return false;
  }
  if (!ParseLiveStatus(text, live)) {
    *err = path + " is not a valid live status";
    return false;
  }
  return true;
}

}  // namespace ratchet
