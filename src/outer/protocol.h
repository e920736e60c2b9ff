// The external-mechanism protocol: JSON lines over the mechanism's stdin and
// stdout. ratchet writes one request object per line and reads one answer
// object per line, in order, each within a time limit. Requests (the "type"
// says which):
//
//   {"type":"hello","protocol":1,"metric":"score","goal":"min","params":[...]}
//     -> {"hooks":["before_propose","on_result"]}          (a non-empty list)
//   {"type":"before_propose","experiment":12,"since_best":4,"incumbent":{E}|null}
//     -> {"guidance":["text", ...], "search_hints":{...}}   (each optional)
//   {"type":"on_candidate","candidate":{"id":12,"description":"...","params":{...}|null,
//                                       "files":["..."],"diff":"..."}}
//     -> {"veto":true,"reason":"..."} | {"params":{...}} (a rewrite) | {}
//   {"type":"on_result","result":{E},"replay":false}
//     -> {}
//   {"type":"accept","candidate":{E},"incumbent":{E}}
//     -> {"decision":"keep"|"discard"|"default","reason":"..."}
//
// {E} is an experiment: {"id","status","metric"|null,"params"|null,"description",
// "reason","baseline","mechanisms"}. "params" of hello lists the search space
// ({"name","type","low","high","log"} or {"name","type":"choice","values"}),
// empty when the proposer is not the search. "search_hints" are the search
// proposer's hints (propose/search/hints.h). Answers with other keys, of the
// wrong type, or that are not one JSON object on one line are garbage.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "propose/search/space.h"

namespace ratchet {

constexpr int kProtocolVersion = 1;

nlohmann::json ExperimentToProtocol(const Experiment& e);
nlohmann::json HelloRequest(const LoopConfig& config, const SearchSpace* space);
nlohmann::json BeforeProposeRequest(const LoopView& view, int since_best);
nlohmann::json OnCandidateRequest(const CandidateView& candidate);
nlohmann::json OnResultRequest(const Experiment& result, bool replay);
nlohmann::json AcceptRequest(const Experiment& candidate, const Experiment& incumbent);

/// The request as one line (bytes that are not UTF-8 replaced).
std::string ToLine(const nlohmann::json& request);

/// Each parser reads one answer line; false with *err saying what is wrong
/// with it ("not JSON", "unknown key 'vet'", ...).
bool ParseHelloAnswer(const std::string& line, std::vector<Hook>* hooks, std::string* err);
/// `space` (may be null) and `anchor` check the search hints as the search
/// would read them.
bool ParseBeforeProposeAnswer(const std::string& line, const SearchSpace* space,
                              const Point& anchor, Guidance* out, std::string* err);
bool ParseOnCandidateAnswer(const std::string& line, const SearchSpace* space,
                            const Point& anchor, CandidateVerdict* out, std::string* err);
bool ParseOnResultAnswer(const std::string& line, std::string* err);
bool ParseAcceptAnswer(const std::string& line, AcceptVerdict* out, std::string* err);

/// "before_propose" -> Hook; false if unknown.
bool ParseHookName(const std::string& name, Hook* hook);

}  // namespace ratchet
