#include "outer/protocol.h"

#include <algorithm>
#include <set>

#include "propose/search/hints.h"

namespace ratchet {

using json = nlohmann::json;

namespace {

constexpr size_t kDiffBytes = 64 << 10;

json ParamsOrNull(const std::string& params_json) {
  if (params_json.empty()) return nullptr;
  json j = json::parse(params_json, nullptr, false);
  return j.is_object() ? j : json(nullptr);
}

bool ParseObject(const std::string& line, const std::set<std::string>& allowed, json* out,
                 std::string* err) {
  *out = json::parse(line, nullptr, false);
  if (out->is_discarded()) {
    *err = "not JSON: '" + line.substr(0, 120) + "'";
    return false;
  }
  if (!out->is_object()) {
    *err = "not a JSON object: '" + line.substr(0, 120) + "'";
    return false;
  }
  for (const auto& [key, value] : out->items()) {
    if (allowed.count(key)) continue;
    std::string list;
    for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
    *err = "unknown key '" + key + "'" + (list.empty() ? " (expected {})" : "; allowed: " + list);
    return false;
  }
  return true;
}

bool CheckHints(const json& hints, const SearchSpace* space, const Point& anchor,
                std::string* err) {
  if (!hints.is_object()) {
    *err = "search_hints must be an object";
    return false;
  }
  if (!space) {
    if (hints.empty()) return true;
    *err = "search_hints given, but the proposer is not the search";
    return false;
  }
  SearchHints parsed;
  return ParseSearchHints(hints.dump(), *space, anchor, &parsed, err);
}

}  // namespace

std::string ToLine(const json& request) {
  // Descriptions and diffs may hold bytes that are not UTF-8: replace them.
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool ParseHookName(const std::string& name, Hook* hook) {
  for (Hook h : {Hook::kBeforePropose, Hook::kOnCandidate, Hook::kOnResult, Hook::kAccept}) {
    if (name == HookName(h)) {
      *hook = h;
      return true;
    }
  }
  return false;
}

json ExperimentToProtocol(const Experiment& e) {
  return {{"id", e.id},
          {"status", StatusName(e.status)},
          {"metric", e.metric ? json(*e.metric) : json(nullptr)},
          {"params", ParamsOrNull(e.params_json)},
          {"description", e.description},
          {"reason", e.reason},
          {"baseline", e.baseline},
          {"mechanisms", e.mechanisms}};
}

json HelloRequest(const LoopConfig& config, const SearchSpace* space) {
  json params = json::array();
  if (space) {
    for (const ParamSpec& p : space->params()) {
      json j = {{"name", p.name}, {"type", ParamTypeName(p.type)}};
      if (p.type == ParamSpec::Type::kChoice) {
        json values = json::array();
        for (size_t k = 0; k < p.choices.size(); ++k)
          values.push_back(space->ValueToJson(static_cast<size_t>(space->Find(p.name)),
                                              static_cast<double>(k)));
        j["values"] = values;
      } else {
        j["low"] = p.low;
        j["high"] = p.high;
        j["log"] = p.log;
      }
      params.push_back(j);
    }
  }
  return {{"type", "hello"},
          {"protocol", kProtocolVersion},
          {"metric", config.metric_name},
          {"goal", config.goal == Goal::kMin ? "min" : "max"},
          {"params", params}};
}

json BeforeProposeRequest(const LoopView& view, int since_best) {
  return {{"type", "before_propose"},
          {"experiment", view.next_id},
          {"since_best", since_best},
          {"incumbent", view.incumbent ? ExperimentToProtocol(*view.incumbent) : json(nullptr)}};
}

json OnCandidateRequest(const CandidateView& c) {
  std::string diff = c.diff.size() > kDiffBytes ? c.diff.substr(0, kDiffBytes) : c.diff;
  return {{"type", "on_candidate"},
          {"candidate",
           {{"id", c.experiment_id},
            {"description", c.description},
            {"params", ParamsOrNull(c.params_json)},
            {"files", c.files_changed},
            {"diff", diff}}}};
}

json OnResultRequest(const Experiment& result, bool replay) {
  return {{"type", "on_result"}, {"result", ExperimentToProtocol(result)}, {"replay", replay}};
}

json AcceptRequest(const Experiment& candidate, const Experiment& incumbent) {
  return {{"type", "accept"},
          {"candidate", ExperimentToProtocol(candidate)},
          {"incumbent", ExperimentToProtocol(incumbent)}};
}

bool ParseHelloAnswer(const std::string& line, std::vector<Hook>* hooks, std::string* err) {
  json j;
  if (!ParseObject(line, {"hooks", "name"}, &j, err)) return false;
  auto it = j.find("hooks");
  if (it == j.end() || !it->is_array() || it->empty()) {
    *err = "the hello answer must list its hooks: {\"hooks\": [\"before_propose\", ...]}";
    return false;
  }
  hooks->clear();
  for (const json& h : *it) {
    Hook hook;
    if (!h.is_string() || !ParseHookName(h.get<std::string>(), &hook)) {
      *err = "unknown hook " + h.dump() +
             "; hooks are before_propose, on_candidate, on_result, accept";
      return false;
    }
    if (std::find(hooks->begin(), hooks->end(), hook) == hooks->end()) hooks->push_back(hook);
  }
  return true;
}

bool ParseBeforeProposeAnswer(const std::string& line, const SearchSpace* space,
                              const Point& anchor, Guidance* out, std::string* err) {
  json j;
  if (!ParseObject(line, {"guidance", "search_hints"}, &j, err)) return false;
  *out = Guidance();
  if (auto it = j.find("guidance"); it != j.end()) {
    if (it->is_string()) {
      out->text.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      for (const json& t : *it) {
        if (!t.is_string()) {
          *err = "guidance must be a string or a list of strings";
          return false;
        }
        out->text.push_back(t.get<std::string>());
      }
    } else {
      *err = "guidance must be a string or a list of strings";
      return false;
    }
  }
  if (auto it = j.find("search_hints"); it != j.end()) {
    if (!CheckHints(*it, space, anchor, err)) return false;
    if (!it->empty()) out->search_hints_json = it->dump();
  }
  return true;
}

bool ParseOnCandidateAnswer(const std::string& line, const SearchSpace* space,
                            const Point& anchor, CandidateVerdict* out, std::string* err) {
  json j;
  if (!ParseObject(line, {"veto", "reason", "params"}, &j, err)) return false;
  *out = CandidateVerdict();
  if (auto it = j.find("veto"); it != j.end()) {
    if (!it->is_boolean()) {
      *err = "veto must be true or false";
      return false;
    }
    out->veto = it->get<bool>();
  }
  if (auto it = j.find("reason"); it != j.end()) {
    if (!it->is_string()) {
      *err = "reason must be a string";
      return false;
    }
    out->reason = it->get<std::string>();
  }
  if (auto it = j.find("params"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      *err = "params must be an object of name: value";
      return false;
    }
    if (!space) {
      *err = "params given, but the proposer is not the search";
      return false;
    }
    Point p;
    if (!space->FromJson(it->dump(), anchor, &p, err)) {
      *err = "params: " + *err;
      return false;
    }
    out->rewritten_params_json = space->ToJson(p);
  }
  return true;
}

bool ParseOnResultAnswer(const std::string& line, std::string* err) {
  json j;
  return ParseObject(line, {}, &j, err);
}

bool ParseAcceptAnswer(const std::string& line, AcceptVerdict* out, std::string* err) {
  json j;
  if (!ParseObject(line, {"decision", "reason"}, &j, err)) return false;
  *out = AcceptVerdict();
  auto it = j.find("decision");
  if (it == j.end() || !it->is_string()) {
    *err = "accept must answer {\"decision\": \"keep\" | \"discard\" | \"default\"}";
    return false;
  }
  const std::string d = it->get<std::string>();
  if (d == "keep" || d == "discard") {
    out->decided = true;
    out->keep = d == "keep";
  } else if (d != "default") {
    *err = "decision \"" + d + "\" is not keep, discard or default";
    return false;
  }
  if (auto r = j.find("reason"); r != j.end()) {
    if (!r->is_string()) {
      *err = "reason must be a string";
      return false;
    }
    out->reason = r->get<std::string>();
  }
  return true;
}

}  // namespace ratchet
