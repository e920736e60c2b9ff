// The pruning replay (see README.md):
//   prune_replay LOOP.json [--rule median|incumbent|halving] [--value loss]
//                [--goal min|max] [--warmup F] [--at F,F,...] [--patience N]
//                [--sigmas X] [--margin X] [--min-runs N] [--eta X]
//                [--percentile P] [--budget S] [--noise-with-main] [--json]
// replays a recorded loop (extract.py, synthetic.py) twice over the same
// candidates: every run in full (what was recorded) and with core/prune.h's
// Pruner deciding, from the curves as they were printed, where each
// candidate's main run would have been cut. The recorded decisions are
// taken as they are: a candidate that is not cut keeps its recorded status.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/curve.h"
#include "core/prune.h"

namespace ratchet::bench {
namespace {

using nlohmann::json;

struct Run {
  std::string purpose;  // main | baseline_repeat | confirm
  double wall_s = 0;
  bool timed_out = false;
  Curve curve;
};

struct Experiment {
  int id = 0;
  bool baseline = false;
  std::string status;
  std::optional<double> metric;
  std::vector<Run> runs;  // in attempt order: the main run first
};

struct Loop {
  std::string source, metric;
  bool metric_max = false;
  double budget_s = 0;
  std::vector<Experiment> experiments;
};

Loop Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const json j = json::parse(in);
  Loop loop;
  loop.source = j.value("source", path);
  loop.metric = j.value("metric", "");
  loop.metric_max = j.value("goal", "min") == "max";
  loop.budget_s = j.value("budget_s", 0.0);
  for (const json& e : j.at("experiments")) {
    Experiment exp;
    exp.id = e.at("id");
    exp.baseline = e.value("baseline", false);
    exp.status = e.at("status");
    if (e.contains("metric") && e["metric"].is_number()) exp.metric = e["metric"].get<double>();
    for (const json& r : e.value("runs", json::array())) {
      Run run;
      run.purpose = r.at("purpose");
      run.wall_s = r.at("wall_s");
      run.timed_out = r.value("timed_out", false);
      for (const json& p : r.value("curve", json::array())) {
        CurvePoint point;
        point.t = p.at("t");
        // null is a value the run printed as NaN (JSON has none).
        for (const auto& [key, v] : p.at("values").items())
          point.values[key] = v.is_number() ? v.get<double>() : std::nan("");
        run.curve.push_back(std::move(point));
      }
      exp.runs.push_back(std::move(run));
    }
    loop.experiments.push_back(std::move(exp));
  }
  return loop;
}

std::vector<double> Fractions(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stod(item));
  return out;
}

// What became of one candidate in the pruned replay.
struct Cut {
  int id = 0;
  double t = 0, fraction = 0;
  std::string reason;
};

struct Outcome {
  double unpruned_s = 0, pruned_s = 0;
  // pruned_s, charging each cut run also what its recorded run spent
  // around the budget (start-up, saving): a killed run pays the start-up.
  double pruned_with_overhead_s = 0;
  int candidates = 0, recorded_keeps = 0, confirmed = 0, unjudged = 0;
  std::vector<Cut> cuts;
  std::vector<int> keeps_lost;
  // Cut candidates that earned a confirm run in the recorded loop (their
  // main run beat the incumbent on the metric): would-be keeps, which count
  // where the recorded loop kept few.
  std::vector<int> confirmed_lost;
  // The best recorded metric among the candidates, and among those the
  // pruned replay let finish: whether pruning cost the loop its best find.
  std::optional<std::pair<int, double>> best_unpruned, best_pruned;
};

bool Full(const Experiment& exp) { return exp.status == "keep" || exp.status == "discard"; }

bool HasConfirm(const Experiment& exp) {
  for (const Run& r : exp.runs)
    if (r.purpose == "confirm") return true;
  return false;
}

void Best(std::optional<std::pair<int, double>>* best, const Experiment& exp, bool max) {
  if (exp.baseline || !exp.metric || !Full(exp)) return;
  if (!*best || (max ? *exp.metric > (*best)->second : *exp.metric < (*best)->second))
    *best = std::make_pair(exp.id, *exp.metric);
}

// noise_with_main: a confirm group holds the main run too (the engine leaves
// it out, so with [accept] confirm = 1 no confirm group is ever formed).
Outcome Replay(const Loop& loop, const PruneConfig& config, double budget_s, bool noise_with_main) {
  Outcome out;
  // What the engine would know when each candidate runs (Engine::
  // RememberCurves): only experiments that finished in the pruned replay.
  const Curve* incumbent = nullptr;
  std::vector<const Curve*> completed;
  std::vector<std::vector<const Curve*>> repeats;
  for (const Experiment& exp : loop.experiments) {
    for (const Run& r : exp.runs) out.unpruned_s += r.wall_s;
    if (!exp.baseline) ++out.candidates;
    if (exp.status == "keep" && !exp.baseline) ++out.recorded_keeps;
    if (HasConfirm(exp)) ++out.confirmed;
    Best(&out.best_unpruned, exp, loop.metric_max);

    const Run* main = nullptr;
    for (const Run& r : exp.runs)
      if (!main && r.purpose == "main") main = &r;
    std::optional<Cut> cut;
    if (main && !exp.baseline && config.enabled()) {
      Pruner pruner(config, budget_s);
      PruneReference ref{incumbent, completed, repeats};
      Curve so_far;  // the curve as it grows, as the engine feeds it
      for (const CurvePoint& p : main->curve) {
        so_far.push_back(p);
        if (pruner.Observe(so_far, ref)) {
          cut = Cut{exp.id, p.t, pruner.pruned_at(), pruner.reason()};
          break;
        }
      }
      if (!cut && !pruner.unjudged().empty()) ++out.unjudged;
    }
    if (cut) {
      // Cut at t; its confirm runs never happen.
      out.pruned_s += cut->t;
      out.pruned_with_overhead_s += cut->t + std::max(0.0, main->wall_s - budget_s);
      if (exp.status == "keep") out.keeps_lost.push_back(exp.id);
      if (HasConfirm(exp)) out.confirmed_lost.push_back(exp.id);
      out.cuts.push_back(*cut);
      continue;
    }
    for (const Run& r : exp.runs) {
      out.pruned_s += r.wall_s;
      out.pruned_with_overhead_s += r.wall_s;
    }
    Best(&out.best_pruned, exp, loop.metric_max);
    // As the engine remembers them: the first run of a finished experiment;
    // the baseline's runs as one noise group, confirm runs (without the
    // main run, which won a selection and is biased) as another.
    // A keep whose run left no curve leaves no incumbent curve, as in the engine.
    if (exp.status == "keep") incumbent = nullptr;
    std::vector<const Curve*> base, confirm;
    for (const Run& r : exp.runs) {
      if (r.curve.empty() || r.timed_out) continue;
      if (&r == main && Full(exp)) {
        completed.push_back(&r.curve);
        if (exp.status == "keep") incumbent = &r.curve;
      }
      if (exp.baseline && (r.purpose == "main" || r.purpose == "baseline_repeat"))
        base.push_back(&r.curve);
      if (r.purpose == "confirm" || (noise_with_main && &r == main && HasConfirm(exp)))
        confirm.push_back(&r.curve);
    }
    for (auto* group : {&base, &confirm})
      if (group->size() > 1) repeats.push_back(*group);
  }
  return out;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

json BestJson(const std::optional<std::pair<int, double>>& best) {
  if (!best) return nullptr;
  return {{"id", best->first}, {"metric", best->second}};
}

std::string BestText(const std::optional<std::pair<int, double>>& best) {
  return best ? Fmt("%.5g", best->second) + " (#" + std::to_string(best->first) + ")" : "none";
}

int Main(int argc, char** argv) {
  std::string path;
  PruneConfig config;
  config.rule = "median";
  config.value = "loss";
  std::optional<double> budget;
  bool as_json = false, noise_with_main = false;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i], value;
    if (key.rfind("--", 0) != 0) {
      path = key;
      continue;
    }
    if (key == "--json" || key == "--noise-with-main") {
      (key == "--json" ? as_json : noise_with_main) = true;
      continue;
    }
    if (const size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw std::runtime_error(key + " needs a value");
    }
    if (key == "--rule")
      config.rule = value;
    else if (key == "--value")
      config.value = value;
    else if (key == "--goal")
      config.goal = value == "max" ? Goal::kMax : Goal::kMin;
    else if (key == "--warmup")
      config.warmup = std::stod(value);
    else if (key == "--at")
      config.at = Fractions(value);
    else if (key == "--patience")
      config.patience = std::stoi(value);
    else if (key == "--sigmas")
      config.sigmas = std::stod(value);
    else if (key == "--margin")
      config.margin = std::stod(value);
    else if (key == "--min-runs")
      config.min_runs = std::stoi(value);
    else if (key == "--eta")
      config.eta = std::stod(value);
    else if (key == "--percentile")
      config.percentile = std::stod(value);
    else if (key == "--budget")
      budget = std::stod(value);
    else
      throw std::runtime_error("unknown flag " + key);
  }
  if (path.empty())
    throw std::runtime_error("usage: prune_replay LOOP.json [--rule R] ... [--json]");
  if (config.rule != "median" && config.rule != "incumbent" && config.rule != "halving")
    throw std::runtime_error("--rule: median, incumbent or halving");
  const Loop loop = Load(path);
  const double budget_s = budget.value_or(loop.budget_s);
  if (budget_s <= 0) throw std::runtime_error("no budget_s in " + path + ": pass --budget");

  const Outcome o = Replay(loop, config, budget_s, noise_with_main);
  const double saved = o.unpruned_s > 0 ? 1 - o.pruned_s / o.unpruned_s : 0;
  const double saved_overhead = o.unpruned_s > 0 ? 1 - o.pruned_with_overhead_s / o.unpruned_s : 0;
  std::string at_text;
  for (double f : config.at) at_text += (at_text.empty() ? "" : ",") + Fmt("%g", f);

  if (as_json) {
    json cuts = json::array();
    for (const Cut& c : o.cuts)
      cuts.push_back({{"id", c.id}, {"t", c.t}, {"at", c.fraction}, {"reason", c.reason}});
    json j = {{"source", loop.source},
              {"rule", config.rule},
              {"value", config.value},
              {"warmup", config.warmup},
              {"at", config.at},
              {"patience", config.patience},
              {"sigmas", config.sigmas},
              {"margin", config.margin},
              {"min_runs", config.min_runs},
              {"eta", config.eta},
              {"percentile", config.percentile},
              {"budget_s", budget_s},
              {"noise_with_main", noise_with_main},
              {"experiments", loop.experiments.size()},
              {"candidates", o.candidates},
              {"unpruned_s", o.unpruned_s},
              {"pruned_s", o.pruned_s},
              {"saved_fraction", saved},
              {"saved_fraction_with_overhead", saved_overhead},
              {"pruned", cuts},
              {"recorded_keeps", o.recorded_keeps},
              {"keeps_lost", o.keeps_lost},
              {"confirmed", o.confirmed},
              {"confirmed_lost", o.confirmed_lost},
              {"unjudged", o.unjudged},
              {"best_unpruned", BestJson(o.best_unpruned)},
              {"best_pruned", BestJson(o.best_pruned)}};
    std::cout << j.dump() << "\n";
    return 0;
  }
  auto ids = [](const std::vector<int>& v) {
    std::string text;
    for (int id : v) text += " #" + std::to_string(id);
    return v.empty() ? text : ":" + text;
  };
  std::cout << "loop " << loop.source << ": " << loop.experiments.size() << " experiments, "
            << o.candidates << " candidates, budget " << Fmt("%g", budget_s) << " s\n"
            << "rule " << config.rule << " on " << config.value << ": warmup "
            << Fmt("%g", config.warmup) << ", at " << at_text << ", patience " << config.patience
            << ", sigmas " << Fmt("%g", config.sigmas) << ", margin " << Fmt("%g", config.margin)
            << ", min_runs " << config.min_runs << ", eta " << Fmt("%g", config.eta)
            << ", percentile " << Fmt("%g", config.percentile)
            << (noise_with_main ? ", noise groups with the main run" : "") << "\n"
            << "compute: unpruned " << Fmt("%.1f", o.unpruned_s) << " s, pruned "
            << Fmt("%.1f", o.pruned_s) << " s, saved " << Fmt("%.1f", 100 * saved) << "% ("
            << Fmt("%.1f", 100 * saved_overhead) << "% charging cut runs their start-up)\n"
            << "pruned " << o.cuts.size() << " of " << o.candidates << " candidates; keeps lost "
            << o.keeps_lost.size() << " of " << o.recorded_keeps << ids(o.keeps_lost)
            << "; would-be keeps (a confirm run) cut " << o.confirmed_lost.size() << " of "
            << o.confirmed << ids(o.confirmed_lost) << "\n"
            << "best candidate " << (loop.metric.empty() ? "metric" : loop.metric) << ": unpruned "
            << BestText(o.best_unpruned) << ", pruned " << BestText(o.best_pruned) << "\n";
  if (o.unjudged)
    std::cout << o.unjudged << " candidates not pruned had a checkpoint that could not be judged\n";
  for (const Cut& c : o.cuts)
    std::cout << "  #" << c.id << " cut at " << Fmt("%.1f", c.t) << " s: " << c.reason << "\n";
  return 0;
}

}  // namespace
}  // namespace ratchet::bench

int main(int argc, char** argv) {
  try {
    return ratchet::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "prune_replay: " << e.what() << "\n";
    return 2;
  }
}
