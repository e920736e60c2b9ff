#include "outer/test_trace.h"

#include <nlohmann/json.hpp>

namespace ratchet::testing {

Trace& Trace::Baseline(double metric) {
  Experiment e;
  e.id = static_cast<int>(history.size()) + 1;
  e.baseline = true;
  e.phase = Phase::kDone;
  e.status = Status::kKeep;
  e.metric = metric;
  e.parent_commit = "c0";
  e.candidate_commit = "c0";
  e.description = "baseline";
  history.push_back(e);
  return *this;
}

Trace& Trace::Add(Status status, std::optional<double> metric, const std::string& params_json,
                  const std::string& description) {
  Experiment e;
  e.id = static_cast<int>(history.size()) + 1;
  e.phase = Phase::kDone;
  e.status = status;
  e.metric = metric;
  e.params_json = params_json;
  e.description = description.empty() ? "change " + std::to_string(e.id) : description;
  e.files_changed = {"train.cpp"};
  const Experiment* best = Incumbent();
  e.parent_commit = best ? best->candidate_commit : "c0";
  e.candidate_commit = "c" + std::to_string(e.id);
  history.push_back(e);
  return *this;
}

Trace& Trace::Step(double metric, const std::string& params_json) {
  const Experiment* best = Incumbent();
  const bool better = !best || !best->metric || config.Better(metric, *best->metric);
  return Add(better ? Status::kKeep : Status::kDiscard, metric, params_json);
}

const Experiment* Trace::Incumbent() const {
  for (auto it = history.rbegin(); it != history.rend(); ++it)
    if (it->status == Status::kKeep) return &*it;
  return nullptr;
}

LoopView Trace::View() const {
  LoopView v;
  v.config = &config;
  v.history = &history;
  v.incumbent = Incumbent();
  v.next_id = static_cast<int>(history.size()) + 1;
  return v;
}

SearchSpace SmallSpace() {
  ParamSpec x, y, n;
  x.name = "X";
  y.name = "Y";
  n.name = "N";
  x.file = y.file = n.file = "train.cpp";
  n.type = ParamSpec::Type::kInt;
  n.low = 0;
  n.high = 10;
  SearchSpace space;
  std::string err;
  SearchSpace::Create({x, y, n}, {}, &space, &err);
  return space;
}

std::string P(double x, double y, int n) {
  return nlohmann::json{{"X", x}, {"Y", y}, {"N", n}}.dump();
}

}  // namespace ratchet::testing
