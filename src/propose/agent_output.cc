#include "propose/agent_output.h"

#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

namespace ratchet {
namespace {

using json = nlohmann::json;

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

int64_t Int(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  double v = it->get<double>();
  return v > 0 ? static_cast<int64_t>(v) : 0;
}

std::optional<double> Cost(const json& object) {
  for (const char* key : {"total_cost_usd", "cost_usd", "total_cost"}) {
    auto it = object.find(key);
    if (it != object.end() && it->is_number()) return it->get<double>();
  }
  return std::nullopt;
}

std::string String(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// JSON objects on lines of their own (Claude's json and stream-json, Codex's
// JSON lines); other lines (stderr, progress) are skipped.
std::vector<json> LineObjects(const std::string& output) {
  std::vector<json> objects;
  for (const std::string& raw : Lines(output)) {
    std::string line = Trim(raw);
    if (line.size() < 2 || line.front() != '{' || line.back() != '}') continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_object()) objects.push_back(std::move(j));
  }
  return objects;
}

// Strips markdown emphasis and list marks around a line's start.
std::string StripMarks(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && std::strchr(" \t*_#>-`", line[i])) ++i;
  return line.substr(i);
}

bool StartsWithNoCase(const std::string& s, const std::string& prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

// The value after "KEY:" on a marked line, or nullopt.
std::optional<std::string> MarkedValue(const std::string& line, const std::string& key) {
  std::string s = StripMarks(line);
  if (!StartsWithNoCase(s, key + ":")) return std::nullopt;
  std::string value = s.substr(key.size() + 1);
  size_t i = 0;
  while (i < value.size() && std::strchr(" \t*_`", value[i])) ++i;
  value = value.substr(i);
  while (!value.empty() && std::strchr(" \t\r*_`", value.back())) value.pop_back();
  return value;
}

}  // namespace

std::vector<std::string> FindJsonObjects(const std::string& text, size_t max_objects) {
  // One pass: a candidate runs from a '{' at depth 0 to its matching '}',
  // with braces inside strings ignored. A candidate that does not parse is
  // skipped as a whole, so the pass stays linear. A stray '{' that never
  // closes would hide what follows it: then scan again from just after it
  // (a bounded number of times).
  std::vector<std::string> found;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t start = 0;
  int restarts = 0;
  size_t i = 0;
  while (i < text.size() && found.size() < max_objects) {
    char c = text[i++];
    if (depth == 0) {
      if (c == '{') {
        depth = 1;
        start = i - 1;
        in_string = escaped = false;
      }
    } else if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      std::string candidate = text.substr(start, i - start);
      if (json::accept(candidate)) found.push_back(std::move(candidate));
    }
    if (i == text.size() && depth > 0 && restarts < 64) {
      ++restarts;
      depth = 0;
      i = start + 1;
    }
  }
  return found;
}

AgentOutput ParseAgentOutput(const std::string& output) {
  AgentOutput out;
  std::vector<json> objects = LineObjects(output);
  if (objects.empty()) {
    for (const std::string& text : FindJsonObjects(output, 1000)) {
      json j = json::parse(text, nullptr, false);
      if (j.is_object()) objects.push_back(std::move(j));
    }
  }
  Usage codex;
  bool codex_usage = false;
  for (const json& j : objects) {
    const std::string type = String(j, "type");
    if (type == "turn.completed") {
      // Codex: one per turn; cached_input_tokens is a part of input_tokens.
      auto usage = j.find("usage");
      if (usage != j.end() && usage->is_object()) {
        codex.input_tokens += Int(*usage, "input_tokens");
        codex.output_tokens += Int(*usage, "output_tokens");
        codex_usage = true;
      }
    } else if (type == "item.completed") {
      auto item = j.find("item");
      if (item != j.end() && item->is_object()) {
        std::string kind = String(*item, "type");
        if (kind.empty()) kind = String(*item, "item_type");
        if (kind == "agent_message" || kind == "assistant_message") {
          out.final_text = String(*item, "text");
          out.structured = true;
        }
      }
    } else if (type == "turn.failed" || type == "error") {
      out.is_error = true;
      std::string message = String(j, "message");
      if (auto e = j.find("error"); message.empty() && e != j.end() && e->is_object())
        message = String(*e, "message");
      out.error_detail = message.empty() ? type : message;
    } else if (type == "result" || j.contains("usage") || Cost(j)) {
      // A final report (Claude Code's result object): cumulative, so the
      // last one wins.
      Usage u;
      if (auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
        u.input_tokens = Int(*usage, "input_tokens") + Int(*usage, "cache_creation_input_tokens") +
                         Int(*usage, "cache_read_input_tokens");
        u.output_tokens = Int(*usage, "output_tokens");
      }
      if (auto cost = Cost(j)) u.cost_usd = *cost > 0 ? *cost : 0;
      out.usage = u;
      out.has_usage = true;
      if (auto result = j.find("result"); result != j.end() && result->is_string()) {
        out.final_text = result->get<std::string>();
        out.structured = true;
      }
      auto is_error = j.find("is_error");
      bool failed = is_error != j.end() && is_error->is_boolean() && is_error->get<bool>();
      std::string subtype = String(j, "subtype");
      if (failed || subtype.rfind("error", 0) == 0) {
        out.is_error = true;
        out.error_detail = subtype.empty() ? "is_error" : subtype;
      } else {
        out.is_error = false;
        out.error_detail.clear();
      }
    }
  }
  if (codex_usage && !out.has_usage) {
    out.usage = codex;
    out.has_usage = true;
  }
  if (!out.structured) out.final_text = output;
  return out;
}

AgentSummary ExtractSummary(const std::string& text) {
  AgentSummary s;
  std::string last;
  for (const std::string& raw : Lines(text)) {
    std::string line = Trim(raw);
    if (line.empty()) continue;
    if (line.rfind("```", 0) != 0) last = line;
    if (auto v = MarkedValue(line, "DESCRIPTION"); v && !v->empty()) {
      s.description = *v;
      s.marked = true;
    } else if (auto h = MarkedValue(line, "HYPOTHESIS"); h && !h->empty()) {
      s.hypothesis = *h;
    }
  }
  if (!s.marked) s.description = last;
  return s;
}

}  // namespace ratchet
