// The JSON shapes of an experiment's structured fields, shared by the ledger's
// JSON columns and by the exports, so both always agree.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/experiment.h"
#include "core/ledger.h"

namespace ratchet {

/// {"name": value, ...}. A non-finite value becomes null (JSON has no NaN).
nlohmann::json MetricsJson(const std::map<std::string, double>& metrics);
/// {"input_tokens": n, "output_tokens": n, "cost_usd": x}
nlohmann::json UsageJson(const Usage& usage);
/// Every field of the record, by its C++ name; `params` parsed when it is JSON.
nlohmann::json ExperimentJson(const Experiment& exp);
/// Every field of a run, by its C++ name.
nlohmann::json RunJson(const RunRecord& run);
/// Every field of a session.
nlohmann::json SessionJson(const Session& session);

/// The inverses (for putting back a row from the ledger's journal): false
/// when a field is missing or of the wrong type.
bool ExperimentFromJson(const nlohmann::json& j, Experiment* exp);
bool RunFromJson(const nlohmann::json& j, RunRecord* run);
bool SessionFromJson(const nlohmann::json& j, Session* session);

/// Compact JSON text. Invalid UTF-8 (a proposer may print anything) is
/// replaced by U+FFFD rather than throwing.
std::string DumpJson(const nlohmann::json& j, int indent = -1);

/// Parsers for the ledger's JSON columns: false on malformed text or a value
/// of the wrong type (null metric values are skipped).
/// A learning curve as [{"t": 12.3, "v": {"loss": 2.41}}, ...] (non-finite
/// values as null), and back.
nlohmann::json CurveJson(const Curve& curve);
bool ParseCurveJson(const std::string& text, Curve* curve);
bool ParseMetricsJson(const std::string& text, std::map<std::string, double>* metrics);
bool ParseUsageJson(const std::string& text, Usage* usage);
bool ParseStringsJson(const std::string& text, std::vector<std::string>* strings);

}  // namespace ratchet
