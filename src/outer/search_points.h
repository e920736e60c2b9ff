// How the outer loop sees the search space: the points of past experiments
// (their params_json), what the search has tried, distances, and the JSON
// search hints it hands the search proposer through Guidance
// (propose/search/hints.h documents the keys).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"
#include "core/hooks.h"
#include "propose/search/optimizer.h"
#include "propose/search/space.h"

namespace ratchet {

/// The point of an experiment from its params_json, leniently: names the
/// space lacks are ignored, missing ones come from `base`. nullopt without
/// parameters, when one is missing and there is no base, or when a value is
/// outside the space.
std::optional<Point> ExperimentPoint(const SearchSpace& space, const Experiment& e,
                                     const Point* base);

/// The incumbent's point; nullopt when it has no parameters (the baseline).
std::optional<Point> IncumbentPoint(const SearchSpace& space, const LoopView& view);

/// What the history teaches a search, as the search proposer reads it: a
/// value (negated for goal = max, so lower is better), a failure, or a point
/// tried without a result. Experiments without a point are left out.
std::vector<Observation> ObservationsOf(const SearchSpace& space,
                                        const std::vector<Experiment>& history, Goal goal,
                                        const Point* base);

/// The largest difference over parameters on the unit scale (a choice
/// counts 0 or 1).
double UnitDistance(const SearchSpace& space, const Point& a, const Point& b);

/// The point as a JSON object of values by name.
nlohmann::json PointJson(const SearchSpace& space, const Point& point);

/// Sets `key` of guidance->search_hints_json. Lists under "avoid" are
/// appended to; any other key is replaced.
void SetHint(Guidance* guidance, const std::string& key, const nlohmann::json& value);
/// The value of `key` in the hints so far, or null.
nlohmann::json GetHint(const Guidance& guidance, const std::string& key);

}  // namespace ratchet
