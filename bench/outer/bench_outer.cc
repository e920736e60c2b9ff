// The outer-loop benchmark (see README.md): the same inner search, with and
// without the outer loop, on tasks where plain search gets stuck, at equal
// experiment budgets, many seeds, paired by seed (same start point, same
// noise for the k-th run), with a Wilcoxon signed-rank test.
//   bench_outer [--seeds 20] [--first-seed 0] [--budget 100] [--inner local]
//               [--tasks a,b] [--arms inner,outer,tuner,mechanisms,...] [--json FILE]
// (Mechanisms were tuned on seeds 1000..1019; the README reports seeds 0..19.)
// Improvement is measured on the noise-free value of the final incumbent:
// (value at the start - value at the end), and as the share of the gap to the
// optimum closed. Everything runs in-process (SimLoop), no git, no files.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "outer/outer_loop.h"
#include "outer/sim_loop.h"
#include "propose/search/rng.h"
#include "stats.h"
#include "tasks.h"

namespace ratchet::bench {
namespace {

struct Arm {
  std::string name;
  bool outer = false;
  OuterConfig config;
};

std::vector<Arm> AllArms() {
  std::vector<Arm> arms;
  arms.push_back({"inner", false, {}});
  Arm full{"outer", true, {}};  // the defaults of [outer]
  arms.push_back(full);
  Arm tuner{"tuner", true, {}};  // level 1.5 alone
  tuner.config.mechanism_every = 0;
  tuner.config.mechanisms = {};
  tuner.config.pool = {};
  arms.push_back(tuner);
  Arm mechanisms{"mechanisms", true, {}};  // the mechanisms and level 2, no tuner
  mechanisms.config.every = 0;
  arms.push_back(mechanisms);
  Arm fixed{"no-level2", true, {}};  // the mechanisms on throughout, the tuner, no level 2
  fixed.config.mechanism_every = 0;
  arms.push_back(fixed);
  Arm no_bandit{"no-bandit", true, {}};  // level 2 without the bandit to switch on
  no_bandit.config.pool = {"tabu", "explore", "restart"};
  arms.push_back(no_bandit);
  for (const std::string& name : BuiltinNames()) {  // one mechanism alone
    Arm one{name, true, {}};
    one.config.every = 0;
    one.config.mechanism_every = 0;
    one.config.mechanisms = {name};
    one.config.pool = {name};
    arms.push_back(one);
  }
  return arms;
}

class CountEvents : public EventSink {
 public:
  void Record(int, const std::string& kind, const std::string& detail) override {
    if (kind != "mechanism") return;
    const nlohmann::json j = nlohmann::json::parse(detail);
    ++actions[j.value("mechanism", "?") + " " + j.value("action", "?")];
  }
  std::map<std::string, int> actions;
};

uint64_t NameHash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

struct Result {
  double start = 0, final = 0;  // noise-free values
  double improvement = 0;       // start - final
  double gap_closed = 0;        // improvement / (start - optimum)
  int crashes = 0, kept = 0;
  std::map<std::pair<std::string, std::string>, long long> calls;
  std::map<std::string, int> touched;  // experiments each mechanism touched
  std::map<std::string, int> actions;  // level-2 decisions
  std::map<std::string, int> acted;    // experiments each mechanism acted on
};

Result RunOne(const Task& task, const Arm& arm, Algorithm inner, uint64_t seed, int budget) {
  SearchSpace space;
  std::string err;
  if (!SearchSpace::Create(task.params, {}, &space, &err)) {
    std::cerr << task.name << ": " << err << "\n";
    std::exit(1);
  }
  SearchOptions options;
  options.algorithm = inner;
  options.seed = seed;
  LoopConfig config;
  config.metric_name = "value";
  config.goal = Goal::kMin;
  HookSet hooks;
  std::unique_ptr<OuterLoop> outer;
  if (arm.outer) {
    OuterDeps deps;
    deps.space = &space;
    deps.seed = seed;
    outer = std::make_unique<OuterLoop>(arm.config, config, deps);
    if (!outer->Install(&hooks, {}, &err)) {
      std::cerr << arm.name << ": " << err << "\n";
      std::exit(1);
    }
  }
  CountEvents events;
  SimLoop sim(&space, options, config, arm.outer ? &hooks : nullptr, outer.get(), &events);
  const uint64_t noise_seed = MixSeed(NameHash(task.name), seed);
  const Objective f = [&](const Point& p, int run) -> std::optional<double> {
    const std::optional<double> v = task.value(p);
    if (!v) return std::nullopt;
    Rng noise(MixSeed(noise_seed, static_cast<uint64_t>(run)));
    return *v + task.noise_sd * noise.Normal();
  };
  const Point start = task.start(seed);
  if (!sim.Run(start, f, budget, &err)) {
    std::cerr << task.name << " " << arm.name << " seed " << seed << ": " << err << "\n";
    std::exit(1);
  }

  Result r;
  r.start = *task.value(start);
  r.final = task.value(sim.incumbent_point()).value_or(r.start);
  r.improvement = r.start - r.final;
  r.gap_closed = r.start > task.optimum ? r.improvement / (r.start - task.optimum) : 0;
  for (const Experiment& e : sim.history()) {
    if (e.status == Status::kCrash) ++r.crashes;
    if (e.status == Status::kKeep && !e.baseline) ++r.kept;
    for (const std::string& m : e.mechanisms) ++r.touched[m];
  }
  r.calls = sim.calls();
  r.actions = events.actions;
  if (outer) {
    r.acted["tuner"] = static_cast<int>(outer->tuner()->acted().size());
    for (const OuterLoop::Managed& m : outer->managed())
      if (m.mechanism) r.acted[m.name] = static_cast<int>(m.mechanism->acted().size());
  }
  return r;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string Fixed(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string P(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, p < 0.001 ? "%.1e" : "%.3f", p);
  return buf;
}

int Main(int argc, char** argv) {
  int seeds = 20, first_seed = 0, budget = 100;
  std::string inner_name = "local", json_path;
  std::vector<std::string> task_names, arm_names = {"inner", "outer", "tuner", "mechanisms"};
  // Every arm: inner, outer, tuner, mechanisms, no-level2, no-bandit, tabu, bandit, explore, restart.
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--seeds") seeds = std::stoi(value);
    else if (key == "--first-seed") first_seed = std::stoi(value);
    else if (key == "--budget") budget = std::stoi(value);
    else if (key == "--inner") inner_name = value;
    else if (key == "--tasks") task_names = Split(value);
    else if (key == "--arms") arm_names = Split(value);
    else if (key == "--json") json_path = value;
    else {
      std::cerr << "unknown option " << key << "\n";
      return 2;
    }
  }
  Algorithm inner;
  if (!ParseAlgorithm(inner_name, &inner)) {
    std::cerr << "unknown inner search " << inner_name << "\n";
    return 2;
  }
  std::vector<Arm> arms;
  for (const std::string& name : arm_names) {
    bool found = false;
    for (const Arm& a : AllArms())
      if (a.name == name) arms.push_back(a), found = true;
    if (!found) {
      std::cerr << "unknown arm " << name << "\n";
      return 2;
    }
  }
  if (arms.empty() || arms[0].name != "inner") {
    std::cerr << "the first arm must be inner (the baseline)\n";
    return 2;
  }
  std::ofstream json;
  if (!json_path.empty()) json.open(json_path);

  std::printf("inner search: %s, budget %d experiments (baseline included), seeds %d..%d\n\n",
              inner_name.c_str(), budget, first_seed, first_seed + seeds - 1);
  // gap[arm][task*seed], paired across arms.
  std::map<std::string, std::vector<double>> all_gaps, all_improvements;
  std::map<std::string, double> seconds;
  std::map<std::pair<std::string, std::string>, long long> outer_calls;
  std::map<std::string, int> outer_touched, outer_actions, outer_acted;
  int outer_experiments = 0;
  std::vector<std::string> rows;
  bool any_worse = false;
  for (const Task& task : Tasks()) {
    if (!task_names.empty() &&
        std::find(task_names.begin(), task_names.end(), task.name) == task_names.end())
      continue;
    std::map<std::string, std::vector<double>> gaps, improvements;
    std::map<std::string, double> crashes;
    for (const Arm& arm : arms) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int s = first_seed; s < first_seed + seeds; ++s) {
        const Result r = RunOne(task, arm, inner, static_cast<uint64_t>(s), budget);
        gaps[arm.name].push_back(r.gap_closed);
        improvements[arm.name].push_back(r.improvement);
        all_gaps[arm.name].push_back(r.gap_closed);
        all_improvements[arm.name].push_back(r.improvement);
        crashes[arm.name] += r.crashes;
        if (arm.name == "outer") {
          for (const auto& [k, n] : r.calls) outer_calls[k] += n;
          for (const auto& [k, n] : r.touched) outer_touched[k] += n;
          for (const auto& [k, n] : r.actions) outer_actions[k] += n;
          for (const auto& [k, n] : r.acted) outer_acted[k] += n;
          outer_experiments += budget;
        }
        if (json.is_open()) {
          nlohmann::json calls = nlohmann::json::object();
          for (const auto& [k, n] : r.calls) calls[k.first + "/" + k.second] = n;
          json << nlohmann::json{{"task", task.name},     {"arm", arm.name},
                                 {"inner", inner_name},   {"seed", s},
                                 {"budget", budget},      {"start", r.start},
                                 {"final", r.final},      {"improvement", r.improvement},
                                 {"gap_closed", r.gap_closed}, {"crashes", r.crashes},
                                 {"kept", r.kept},        {"calls", calls}}
                      .dump()
               << "\n";
        }
      }
      seconds[arm.name] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    std::string row = "| " + task.name + " |";
    for (const Arm& arm : arms) {
      const Summary g = Summarize(gaps[arm.name]);
      const Summary imp = Summarize(improvements[arm.name]);
      row += " " + Fixed(imp.mean) + " (" + Fixed(g.mean, 2) + ")";
      if (arm.name != "inner") {
        const double p = WilcoxonSignedRankP(improvements[arm.name], improvements["inner"]);
        const bool worse = p < 0.05 && imp.mean < Summarize(improvements["inner"]).mean;
        if (worse && arm.name == "outer") any_worse = true;
        row += " p=" + P(p) + (worse ? " WORSE" : "");
      }
      row += " |";
    }
    rows.push_back(row);
  }

  std::string header = "| task |", rule = "|---|";
  for (const Arm& arm : arms) {
    header += " " + arm.name + " |";
    rule += "---|";
  }
  std::printf("Mean improvement of the noise-free value (share of the gap to the optimum "
              "closed), p of a paired Wilcoxon signed-rank test against inner:\n\n%s\n%s\n",
              header.c_str(), rule.c_str());
  for (const std::string& r : rows) std::printf("%s\n", r.c_str());

  std::printf("\nAll tasks (mean over task x seed pairs): improvement of the noise-free value, "
              "and share of the gap to the optimum closed; p of the paired Wilcoxon test "
              "against inner on each:\n\n");
  std::printf("| arm | mean improvement | ratio to inner | p vs inner | mean gap closed | ratio "
              "to inner | p vs inner | seconds |\n|---|---|---|---|---|---|---|---|\n");
  const double base_imp = Summarize(all_improvements["inner"]).mean;
  const double base_gap = Summarize(all_gaps["inner"]).mean;
  for (const Arm& arm : arms) {
    const Summary imp = Summarize(all_improvements[arm.name]);
    const Summary g = Summarize(all_gaps[arm.name]);
    const bool base = arm.name == "inner";
    const std::string imp_ratio = base_imp > 0 ? Fixed(imp.mean / base_imp, 2) : "-";
    const std::string gap_ratio = base_gap > 0 ? Fixed(g.mean / base_gap, 2) : "-";
    const std::string imp_p =
        base ? "-" : P(WilcoxonSignedRankP(all_improvements[arm.name], all_improvements["inner"]));
    const std::string gap_p = base ? "-" : P(WilcoxonSignedRankP(all_gaps[arm.name], all_gaps["inner"]));
    std::printf("| %s | %s +- %s | %s | %s | %s +- %s | %s | %s | %.1f |\n", arm.name.c_str(),
                Fixed(imp.mean).c_str(), Fixed(imp.sem).c_str(), imp_ratio.c_str(), imp_p.c_str(),
                Fixed(g.mean).c_str(), Fixed(g.sem).c_str(), gap_ratio.c_str(), gap_p.c_str(),
                seconds[arm.name]);
  }
  if (!outer_calls.empty()) {
    std::printf("\nMechanism calls in the outer arm (all tasks and seeds), and the experiments "
                "each touched:\n\n| mechanism | hook | calls |\n|---|---|---|\n");
    for (const auto& [k, n] : outer_calls)
      std::printf("| %s | %s | %lld |\n", k.first.c_str(), k.second.c_str(), n);
    std::printf("\nOf %d experiments, those each mechanism touched (was called for) and acted "
                "on (changed the proposal):\n\n| mechanism | touched | acted on |\n|---|---|---|\n",
                outer_experiments);
    for (const auto& [k, n] : outer_touched)
      std::printf("| %s | %d | %d |\n", k.c_str(), n, outer_acted[k]);
    std::printf("\nLevel-2 decisions in the outer arm:\n\n| mechanism action | times |\n|---|---|\n");
    for (const auto& [k, n] : outer_actions) std::printf("| %s | %d |\n", k.c_str(), n);
  }
  if (any_worse) std::printf("\nThe outer loop is significantly worse on some task.\n");
  return 0;
}

}  // namespace
}  // namespace ratchet::bench

int main(int argc, char** argv) { return ratchet::bench::Main(argc, argv); }
