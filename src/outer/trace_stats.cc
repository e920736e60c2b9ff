#include "outer/trace_stats.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

namespace ratchet {

namespace {

using json = nlohmann::json;

// What makes two proposals "the same": their parameters, else their description.
std::string ProposalKey(const Experiment& e) {
  if (!e.params_json.empty()) {
    json j = json::parse(e.params_json, nullptr, false);
    if (j.is_object()) return "p:" + j.dump();  // keys sorted: a canonical form
  }
  std::string d;
  for (char c : e.description) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "d:" + d;
}

bool Decided(Status s) {
  return s == Status::kKeep || s == Status::kDiscard || IsRunFailure(s);
}

void Count(ChangeStats* c, const Experiment& e, double gain) {
  ++c->tried;
  if (e.status == Status::kKeep) {
    ++c->keeps;
    c->gain += std::max(0.0, gain);
  }
  if (IsRunFailure(e.status)) ++c->failures;
}

}  // namespace

bool IsRunFailure(Status status) {
  return status == Status::kCrash || status == Status::kTimeout ||
         status == Status::kGateFailed || status == Status::kPruned;
}

TraceStats ComputeTraceStats(const std::vector<Experiment>& history, Goal goal, int window) {
  TraceStats s;
  s.experiments = static_cast<int>(history.size());
  window = std::max(1, window);

  // The incumbent as each experiment saw it, and where it ends.
  std::map<std::string, const Experiment*> by_commit;
  std::set<std::string> seen;
  std::optional<double> best;
  int first_in_window = std::max(0, s.experiments - window);
  std::optional<double> best_before_window;
  int window_n = 0, keeps = 0, crashes = 0, failures = 0, repeats = 0;

  for (int i = 0; i < s.experiments; ++i) {
    const Experiment& e = history[static_cast<size_t>(i)];
    if (i == first_in_window) best_before_window = best;
    const bool in_window = i >= first_in_window && !e.baseline;
    const std::string key = ProposalKey(e);
    if (in_window) {
      ++window_n;
      if (e.status == Status::kKeep) ++keeps;
      if (e.status == Status::kCrash || e.status == Status::kTimeout) ++crashes;
      if (IsFailureStatus(e.status)) ++failures;
      if (!e.baseline && seen.count(key)) ++repeats;
    }
    if (!e.baseline) seen.insert(key);

    // What the change was, and what came of it.
    const Experiment* parent = nullptr;
    if (auto it = by_commit.find(e.parent_commit); it != by_commit.end()) parent = it->second;
    const double gain = (e.metric && parent && parent->metric)
                            ? Gain(goal, *parent->metric, *e.metric)
                            : 0;
    if (!e.baseline && Decided(e.status)) {
      std::vector<std::string> files = e.files_changed;
      std::sort(files.begin(), files.end());
      std::string family;
      for (const std::string& f : files) family += (family.empty() ? "" : ",") + f;
      if (!family.empty()) Count(&s.families[family], e, gain);
      if (parent && !parent->params_json.empty() && !e.params_json.empty()) {
        json now = json::parse(e.params_json, nullptr, false);
        json before = json::parse(parent->params_json, nullptr, false);
        if (now.is_object() && before.is_object()) {
          for (const auto& [name, value] : now.items()) {
            auto b = before.find(name);
            if (b == before.end() || *b != value) Count(&s.params[name], e, gain);
          }
        }
      }
    }

    if (e.status == Status::kKeep) {
      if (!e.candidate_commit.empty()) by_commit[e.candidate_commit] = &e;
      if (e.baseline) s.start = e.metric;
      best = e.metric;
      s.best_id = e.id;
      s.since_best = 0;
    } else {
      ++s.since_best;
    }
  }
  s.best = best;
  s.window = window_n;
  if (!best_before_window) best_before_window = s.start;  // the window holds every experiment
  if (window_n > 0) {
    const double n = window_n;
    s.keep_rate = keeps / n;
    s.crash_rate = crashes / n;
    s.failure_rate = failures / n;
    s.repeat_rate = repeats / n;
    if (best && best_before_window)
      s.improvement_per_experiment = std::max(0.0, Gain(goal, *best_before_window, *best)) / n;
  }
  return s;
}

std::string TraceStatsJson(const TraceStats& s, bool details) {
  json j = {{"experiments", s.experiments},
            {"window", s.window},
            {"keep_rate", s.keep_rate},
            {"crash_rate", s.crash_rate},
            {"failure_rate", s.failure_rate},
            {"improvement_per_experiment", s.improvement_per_experiment},
            {"repeat_rate", s.repeat_rate},
            {"since_best", s.since_best}};
  if (s.best) j["best"] = *s.best;
  if (s.start) j["start"] = *s.start;
  if (details) {
    auto table = [](const std::map<std::string, ChangeStats>& m) {
      json t = json::object();
      for (const auto& [name, c] : m)
        t[name] = {{"tried", c.tried}, {"keeps", c.keeps}, {"failures", c.failures},
                   {"gain", c.gain}};
      return t;
    };
    j["params"] = table(s.params);
    j["families"] = table(s.families);
  }
  return j.dump();
}

}  // namespace ratchet
