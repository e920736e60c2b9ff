#include "propose/history_json.h"

#include <nlohmann/json.hpp>

namespace ratchet {

std::string HistoryJson(const std::vector<Experiment>& history) {
  nlohmann::json out = nlohmann::json::array();
  for (const Experiment& e : history) {
    nlohmann::json params = nullptr;
    if (!e.params_json.empty()) params = nlohmann::json::parse(e.params_json, nullptr, false);
    if (params.is_discarded()) params = nullptr;
    out.push_back({
        {"id", e.id},
        {"status", StatusName(e.status)},
        {"reason", e.reason},
        {"metric", e.metric ? nlohmann::json(*e.metric) : nlohmann::json(nullptr)},
        {"metrics", e.metrics},
        {"description", e.description},
        {"params", params},
        {"baseline", e.baseline},
        {"commit", e.candidate_commit},
    });
  }
  return out.dump(1);
}

}  // namespace ratchet
