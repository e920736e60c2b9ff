#include "propose/agent_output.h"

#include <algorithm>
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

// ---- the parser ----------------------------------------------------------------

namespace {

int64_t Int(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  double v = it->get<double>();
  return v > 0 && v < 9e18 ? static_cast<int64_t>(v) : 0;
}

double Money(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  double v = it->get<double>();
  return v > 0 && v < 1e12 ? v : 0;  // a negative or absurd report pays nothing back
}

bool HasNumber(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number();
}

std::string String(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const json* Object(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

void KeepMax(ModelTokens* into, const ModelTokens& t) {
  into->input = std::max(into->input, t.input);
  into->output = std::max(into->output, t.output);
  into->cache_read = std::max(into->cache_read, t.cache_read);
  into->cache_write = std::max(into->cache_write, t.cache_write);
}

// Anthropic's usage object: input_tokens excludes the cache.
ModelTokens AnthropicTokens(const json& usage) {
  ModelTokens t;
  t.input = Int(usage, "input_tokens");
  t.output = Int(usage, "output_tokens");
  t.cache_read = Int(usage, "cache_read_input_tokens");
  t.cache_write = Int(usage, "cache_creation_input_tokens");
  return t;
}

bool IsClaudeReport(const json& j, const std::string& type) {
  if (type == "result") return true;
  // An untyped object with a cost or usage: an older or a hand-made report.
  return type.empty() && (j.contains("usage") || HasNumber(j, "total_cost_usd") ||
                          HasNumber(j, "cost_usd") || HasNumber(j, "total_cost"));
}

// The HTTP status in a Codex error message ("unexpected status 401 ...",
// "last status: 429 ...").
int StatusIn(const std::string& text) {
  for (const char* marker : {"unexpected status ", "last status: "}) {
    size_t at = text.find(marker);
    if (at == std::string::npos) continue;
    at += std::strlen(marker);
    int status = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])))
      status = status * 10 + (text[at++] - '0');
    if (status >= 100 && status < 1000) return status;
  }
  return 0;
}

}  // namespace

struct AgentOutputParser::State {
  bool any_object = false;
  // Claude Code's reports: the largest of each running total.
  int reports = 0;
  std::map<std::string, ModelSpend> reported_models;
  ModelTokens reported_plain;  // a report's usage (without modelUsage: older versions)
  double reported_cost = 0;
  bool report_error = false;
  bool report_has_text = false;
  std::string report_text, report_error_text, report_error_kind;
  int report_status = 0;
  // Claude Code's stream, per API message id.
  struct Message {
    std::string model;
    ModelTokens tokens;
  };
  std::map<std::string, Message> messages;
  // Codex.
  bool codex_turns_seen = false, codex_session_seen = false;
  Usage codex_turns, codex_session;
  bool codex_failed = false, codex_has_text = false;
  std::string codex_error, codex_text;
  // opencode: its steps, summed.
  bool opencode_seen = false, opencode_has_text = false;
  Usage opencode;
  std::string opencode_text;
  std::string last_retry, last_error;

  void Take(const json& j);
  void ClaudeReport(const json& j);
  void ClaudeMessage(const std::string& id, const std::string& model, const json* usage);
};

void AgentOutputParser::State::ClaudeMessage(const std::string& id, const std::string& model,
                                             const json* usage) {
  // Claude Code's made-up messages (an API error shown as text) cost nothing.
  if (id.empty() || model == "<synthetic>") return;
  Message& m = messages[id];
  if (!model.empty()) m.model = model;
  // The same call is printed more than once (message_start, one assistant
  // event per content block, message_delta), each with the usage known at
  // that point: every count only grows.
  if (usage) KeepMax(&m.tokens, AnthropicTokens(*usage));
}

void AgentOutputParser::State::ClaudeReport(const json& j) {
  ++reports;
  double cost = 0;
  for (const char* key : {"total_cost_usd", "cost_usd", "total_cost"})
    if (HasNumber(j, key)) {
      cost = Money(j, key);
      break;
    }
  if (const json* models = Object(j, "modelUsage")) {
    double sum = 0;
    for (const auto& [name, m] : models->items()) {
      if (!m.is_object()) continue;
      ModelTokens t;
      t.input = Int(m, "inputTokens");
      t.output = Int(m, "outputTokens");
      t.cache_read = Int(m, "cacheReadInputTokens");
      t.cache_write = Int(m, "cacheCreationInputTokens");
      ModelSpend& spend = reported_models[name];
      KeepMax(&spend.tokens, t);
      spend.cost_usd = std::max(spend.cost_usd, Money(m, "costUSD"));
      spend.priced = true;
      sum += Money(m, "costUSD");
    }
    if (cost == 0) cost = sum;
  }
  reported_cost = std::max(reported_cost, cost);
  if (const json* usage = Object(j, "usage")) KeepMax(&reported_plain, AnthropicTokens(*usage));

  // What the run came to: the last report says (a later batch of work may
  // fail or recover).
  if (auto r = j.find("result"); r != j.end() && r->is_string()) {
    report_text = r->get<std::string>();
    report_has_text = true;
  }
  auto flag = j.find("is_error");
  bool failed = flag != j.end() && flag->is_boolean() && flag->get<bool>();
  const std::string subtype = String(j, "subtype");
  report_error = failed || subtype.rfind("error", 0) == 0;
  report_error_text.clear();
  report_error_kind.clear();
  report_status = 0;
  if (!report_error) return;
  // Claude Code says success for an API error: the status and the text
  // are what the user needs to read.
  if (HasNumber(j, "api_error_status")) {
    report_status = static_cast<int>(Int(j, "api_error_status"));
    report_error_kind = "HTTP " + std::to_string(report_status);
    if (std::string t = String(j, "api_error_type"); !t.empty()) report_error_kind += " " + t;
  } else if (!subtype.empty() && subtype != "success") {
    report_error_kind = subtype;
  } else {
    report_error_kind = String(j, "terminal_reason");
    if (report_error_kind.empty()) report_error_kind = "is_error";
  }
  if (auto errors = j.find("errors"); errors != j.end() && errors->is_array()) {
    for (const json& e : *errors)
      if (e.is_string())
        report_error_text += (report_error_text.empty() ? "" : "; ") + e.get<std::string>();
  }
  if (report_error_text.empty() && report_has_text) report_error_text = report_text;
}

void AgentOutputParser::State::Take(const json& j) {
  any_object = true;
  const std::string type = String(j, "type");
  if (type == "stream_event") {
    const json* event = Object(j, "event");
    if (!event) return;
    const std::string kind = String(*event, "type");
    if (kind == "message_start") {
      if (const json* m = Object(*event, "message"))
        ClaudeMessage(String(*m, "id"), String(*m, "model"), Object(*m, "usage"));
    } else if (kind == "message_delta") {
      ClaudeMessage(String(j, "api_message_id"), "", Object(*event, "usage"));
    }
  } else if (type == "assistant") {
    if (const json* m = Object(j, "message"))
      ClaudeMessage(String(*m, "id"), String(*m, "model"), Object(*m, "usage"));
  } else if (type == "system") {
    if (String(j, "subtype") == "api_retry") {
      std::string what = "API error";
      if (HasNumber(j, "error_status")) what += " " + std::to_string(Int(j, "error_status"));
      if (std::string e = String(j, "error"); !e.empty()) what += " (" + e + ")";
      last_retry = what + ", retry " + std::to_string(Int(j, "attempt")) + " of " +
                   std::to_string(Int(j, "max_retries"));
    }
  } else if (type == "turn.completed") {
    codex_failed = false;
    if (const json* usage = Object(j, "usage")) {
      // Codex: cached_input_tokens are a part of input_tokens.
      codex_turns.input_tokens += Int(*usage, "input_tokens");
      codex_turns.output_tokens += Int(*usage, "output_tokens");
      codex_turns_seen = true;
    }
  } else if (type == "turn.failed") {
    codex_failed = true;
    codex_error = "turn.failed";
    if (const json* e = Object(j, "error"); e && !String(*e, "message").empty())
      codex_error = String(*e, "message");
  } else if (type == "error") {
    std::string message = String(j, "message");
    if (const json* e = Object(j, "error"); message.empty() && e) {
      message = String(*e, "message");
      // opencode: {"error":{"name":"APIError","data":{"message":..,"statusCode":401}}}
      if (const json* data = Object(*e, "data"); message.empty() && data) {
        message = String(*e, "name");
        if (std::string m = String(*data, "message"); !m.empty())
          message += (message.empty() ? "" : ": ") + m;
        if (HasNumber(*data, "statusCode"))
          message += " (HTTP " + std::to_string(Int(*data, "statusCode")) + ")";
      }
    }
    if (message.rfind("Reconnecting", 0) == 0)
      last_retry = message;  // Codex retries: not a failure unless the turn fails
    else
      last_error = message.empty() ? "error" : message;
  } else if (type == "step_finish") {
    // opencode: one per model call, with that call's tokens and cost.
    if (const json* part = Object(j, "part")) {
      if (const json* t = Object(*part, "tokens")) {
        const json* cache = Object(*t, "cache");
        opencode.input_tokens += Int(*t, "input") +
                                 (cache ? Int(*cache, "read") + Int(*cache, "write") : 0);
        opencode.output_tokens += Int(*t, "output") + Int(*t, "reasoning");
      }
      opencode.cost_usd += Money(*part, "cost");
      opencode_seen = true;
    }
  } else if (type == "text") {
    if (const json* part = Object(j, "part"); part && part->contains("text")) {
      opencode_text = String(*part, "text");
      opencode_has_text = true;
    }
  } else if (type == "item.completed") {
    if (const json* item = Object(j, "item")) {
      std::string kind = String(*item, "type");
      if (kind.empty()) kind = String(*item, "item_type");
      if (kind == "agent_message" || kind == "assistant_message") {
        codex_text = String(*item, "text");
        codex_has_text = true;
      }
    }
  } else if (IsClaudeReport(j, type)) {
    ClaudeReport(j);
  }
}

AgentOutputParser::AgentOutputParser(const PriceTable* prices)
    : s_(std::make_unique<State>()), prices_(prices) {}
AgentOutputParser::~AgentOutputParser() = default;

void AgentOutputParser::Feed(std::string_view raw) {
  std::string line = Trim(std::string(raw));
  if (line.size() < 2 || line.front() != '{' || line.back() != '}') return;
  json j = json::parse(line, nullptr, false);
  if (j.is_object()) s_->Take(j);
}

void AgentOutputParser::FeedCodexSession(const std::string& text) {
  for (const std::string& raw : Lines(text)) {
    if (raw.find("token_count") == std::string::npos) continue;
    json j = json::parse(raw, nullptr, false);
    if (!j.is_object()) continue;
    const json* payload = Object(j, "payload");
    if (!payload || String(*payload, "type") != "token_count") continue;
    const json* info = Object(*payload, "info");
    const json* total = info ? Object(*info, "total_token_usage") : nullptr;
    if (!total) continue;
    // A running total of the thread: the last one is the whole spend.
    s_->codex_session.input_tokens = Int(*total, "input_tokens");
    s_->codex_session.output_tokens = Int(*total, "output_tokens");
    s_->codex_session_seen = true;
  }
}

AgentOutput AgentOutputParser::Finish(const std::string& rest) {
  State& s = *s_;
  // No line was a JSON object: a pretty-printed report, or one among text.
  // A report line too long to arrive whole: look for it in the rest.
  if (!s.any_object || s.reports == 0) {
    bool all = !s.any_object;
    for (const std::string& text : FindJsonObjects(rest, 1000)) {
      json j = json::parse(text, nullptr, false);
      if (!j.is_object()) continue;
      if (all)
        s.Take(j);
      else if (IsClaudeReport(j, String(j, "type")))
        s.ClaudeReport(j);
    }
  }
  const PriceTable builtin = prices_ ? PriceTable() : PriceTable::Builtin();
  const PriceTable& prices = prices_ ? *prices_ : builtin;

  AgentOutput out;
  out.reports = s.reports;
  out.reported = s.reports > 0 || s.codex_turns_seen || s.opencode_seen;
  out.streamed = !s.messages.empty();
  out.has_usage = out.reported || out.streamed || s.codex_session_seen;

  // Claude Code: what it reported against what it streamed.
  ModelTokens reported;
  if (!s.reported_models.empty()) {
    for (const auto& [name, m] : s.reported_models) {
      reported.input += m.tokens.input;
      reported.output += m.tokens.output;
      reported.cache_read += m.tokens.cache_read;
      reported.cache_write += m.tokens.cache_write;
    }
  } else {
    reported = s.reported_plain;
  }
  std::map<std::string, ModelSpend> streamed;
  ModelTokens streamed_total;
  double streamed_cost = 0;
  for (const auto& [id, m] : s.messages) {
    ModelSpend& spend = streamed[m.model.empty() ? "(unknown)" : m.model];
    spend.tokens.input += m.tokens.input;
    spend.tokens.output += m.tokens.output;
    spend.tokens.cache_read += m.tokens.cache_read;
    spend.tokens.cache_write += m.tokens.cache_write;
    streamed_total.input += m.tokens.input;
    streamed_total.output += m.tokens.output;
    streamed_total.cache_read += m.tokens.cache_read;
    streamed_total.cache_write += m.tokens.cache_write;
  }
  for (auto& [name, spend] : streamed) {
    if (std::optional<double> cost = prices.Cost(name, spend.tokens)) {
      spend.cost_usd = *cost;
      spend.priced = true;
      streamed_cost += *cost;
    } else if (spend.tokens.total_input() + spend.tokens.output > 0) {
      out.unpriced_models.push_back(name);
    }
  }
  out.usage.input_tokens = std::max(reported.total_input(), streamed_total.total_input());
  out.usage.output_tokens = std::max(reported.output, streamed_total.output);
  out.usage.cost_usd = std::max(s.reported_cost, streamed_cost);
  out.models = s.reported_models;
  for (const auto& [name, spend] : streamed) {
    ModelSpend& m = out.models[name];
    KeepMax(&m.tokens, spend.tokens);
    if (spend.priced && (!m.priced || spend.cost_usd > m.cost_usd)) m.cost_usd = spend.cost_usd;
    m.priced = m.priced || spend.priced;
  }
  // Codex: its turns, or its session file when it was killed mid-turn.
  out.usage.input_tokens +=
      std::max(s.codex_turns.input_tokens, s.codex_session.input_tokens);
  out.usage.output_tokens +=
      std::max(s.codex_turns.output_tokens, s.codex_session.output_tokens);

  out.usage.input_tokens += s.opencode.input_tokens;
  out.usage.output_tokens += s.opencode.output_tokens;
  out.usage.cost_usd += s.opencode.cost_usd;

  if (s.report_has_text) {
    out.final_text = s.report_text;
    out.structured = true;
  } else if (s.codex_has_text) {
    out.final_text = s.codex_text;
    out.structured = true;
  } else if (s.opencode_has_text) {
    out.final_text = s.opencode_text;
    out.structured = true;
  } else {
    out.final_text = rest;
  }
  if (s.reports > 0 && s.report_error) {
    out.is_error = true;
    out.error_text = s.report_error_text;
    out.error_kind = s.report_error_kind;
    out.api_status = s.report_status;
  } else if (s.codex_failed) {
    out.is_error = true;
    out.error_text = s.codex_error;
    out.error_kind = "turn.failed";
    out.api_status = StatusIn(s.codex_error);
  }
  out.last_error = s.last_error;
  out.last_retry = s.last_retry;
  return out;
}

AgentOutput ParseAgentOutput(const std::string& output, const PriceTable* prices) {
  AgentOutputParser parser(prices);
  for (const std::string& line : Lines(output)) parser.Feed(line);
  return parser.Finish(output);
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
