// The search-quality benchmark driver (see README.md).
//   bench_search run [--functions a,b] [--methods auto,tpe,...] [--seeds N]
//                    [--budget N] [--checkpoints 30,100] [--workers N]
//                    [--liar worst|mean|best|believer]
//       runs ratchet's algorithms in-process; one JSON line per run. With
//       --workers N, N points are in flight at once (asked with the others
//       pending) and the oldest is told first.
//   bench_search list
//       the functions and their spaces as JSON (for run.py).
//   bench_search serve FUNCTION SEED
//       evaluates points for another optimiser (Optuna) over stdin/stdout:
//       "eval v1 v2 ..." -> "ok VALUE" | "fail"; "regret v1 v2 ..." -> "REGRET".
// Evaluation k of seed s of a function gets the same noise whichever
// optimiser asks, so every method sees the same noisy function.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "functions.h"
#include "propose/search/optimizer.h"
#include "propose/search/rng.h"

namespace ratchet::bench {
namespace {

uint64_t NameHash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// One run's evaluations: noisy values as an optimiser sees them.
class Evaluator {
 public:
  Evaluator(const TestFunction& f, uint64_t seed) : f_(f), seed_(MixSeed(NameHash(f.name), seed)) {}
  std::optional<double> Eval(const Point& x) {
    const std::optional<double> v = f_.value(x);
    Rng noise(MixSeed(seed_, count_++));
    if (!v) return std::nullopt;
    return *v + f_.noise_sd * noise.Normal();
  }
  double Regret(const Point& x) const {
    const std::optional<double> v = f_.value(x);
    return v ? *v - f_.optimum : std::numeric_limits<double>::infinity();
  }

 private:
  const TestFunction& f_;
  uint64_t seed_;
  uint64_t count_ = 0;
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool MakeSpace(const TestFunction& f, SearchSpace* space) {
  std::string err;
  if (!SearchSpace::Create(f.params, {}, space, &err)) {
    std::cerr << f.name << ": " << err << "\n";
    return false;
  }
  return true;
}

int Run(int argc, char** argv) {
  std::vector<std::string> functions, methods = {"auto", "tpe", "random"};
  int seeds = 20, budget = 100, workers = 1;
  SearchOptions::Liar liar = SearchOptions().liar;
  bool trace = false;
  std::vector<int> checkpoints = {30, 100};
  for (int i = 2; i < argc; i += 2) {
    const std::string key = argv[i], value = i + 1 < argc ? argv[i + 1] : "";
    if (key == "--trace") {
      trace = true;
      --i;
      continue;
    }
    if (key == "--functions")
      functions = Split(value);
    else if (key == "--methods")
      methods = Split(value);
    else if (key == "--seeds")
      seeds = std::stoi(value);
    else if (key == "--budget")
      budget = std::stoi(value);
    else if (key == "--workers")
      workers = std::max(1, std::stoi(value));
    else if (key == "--liar") {
      if (!ParseLiar(value, &liar)) {
        std::cerr << "unknown liar " << value << "\n";
        return 2;
      }
    }
    else if (key == "--checkpoints") {
      checkpoints.clear();
      for (const std::string& c : Split(value)) checkpoints.push_back(std::stoi(c));
    } else {
      std::cerr << "unknown option " << key << "\n";
      return 2;
    }
  }
  for (const TestFunction& f : TestFunctions()) {
    if (!functions.empty() &&
        std::find(functions.begin(), functions.end(), f.name) == functions.end())
      continue;
    SearchSpace space;
    if (!MakeSpace(f, &space)) return 1;
    for (const std::string& method : methods) {
      SearchOptions options;
      options.liar = liar;
      if (!ParseAlgorithm(method, &options.algorithm)) {
        std::cerr << "unknown method " << method << "\n";
        return 2;
      }
      for (int seed = 0; seed < seeds; ++seed) {
        options.seed = static_cast<uint64_t>(seed);
        Study study(&space, options);
        Evaluator eval(f, static_cast<uint64_t>(seed));
        const auto start = std::chrono::steady_clock::now();
        nlohmann::json regrets = nlohmann::json::object();
        double best_seen = std::numeric_limits<double>::infinity();
        Point best_point;
        // With several workers, `workers` points are in flight at once and
        // the oldest finishes first (runs of equal length): each ask sees
        // the results told so far and the points still pending.
        int asked = 0;
        std::deque<Point> in_flight;
        for (int k = 1; k <= budget; ++k) {
          while (asked < budget && static_cast<int>(in_flight.size()) < workers) {
            Point asked_point;
            std::string err;
            if (!study.Ask(&asked_point, &err)) {
              std::cerr << f.name << " " << method << " seed " << seed << ": " << err << "\n";
              return 1;
            }
            ++asked;
            in_flight.push_back(std::move(asked_point));
            if (trace)
              std::cerr << "ask " << asked << " " << study.last_method() << " "
                        << space.Describe(in_flight.back()) << "\n";
          }
          const Point x = std::move(in_flight.front());
          in_flight.pop_front();
          const std::optional<double> y = eval.Eval(x);
          study.Tell(x, y);
          if (trace) {
            std::cerr << k << " " << space.Describe(x) << " -> "
                      << (y ? std::to_string(*y) : "fail") << "\n";
          }
          if (y && *y < best_seen) {
            best_seen = *y;
            best_point = x;
          }
          for (int c : checkpoints) {
            if (c == k) {
              const double r = best_point.empty() ? std::numeric_limits<double>::infinity()
                                                  : eval.Regret(best_point);
              regrets[std::to_string(c)] =
                  std::isfinite(r) ? nlohmann::json(r) : nlohmann::json(nullptr);
            }
          }
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        nlohmann::json line = {{"function", f.name},
                               {"method", method},
                               {"seed", seed},
                               {"workers", workers},
                               {"liar", LiarName(liar)},
                               {"regret", regrets},
                               {"seconds", seconds}};
        std::cout << line.dump() << std::endl;
      }
    }
  }
  return 0;
}

int List() {
  nlohmann::json out = nlohmann::json::array();
  for (const TestFunction& f : TestFunctions()) {
    nlohmann::json params = nlohmann::json::array();
    for (const ParamSpec& p : f.params) {
      nlohmann::json j = {{"name", p.name}, {"type", ParamTypeName(p.type)}};
      if (p.type == ParamSpec::Type::kChoice) {
        j["choices"] = p.choices.size();
      } else {
        j["low"] = p.low;
        j["high"] = p.high;
        j["log"] = p.log;
      }
      params.push_back(j);
    }
    out.push_back({{"name", f.name},
                   {"kind", f.kind},
                   {"noise_sd", f.noise_sd},
                   {"optimum", f.optimum},
                   {"params", params}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int Serve(const std::string& name, uint64_t seed) {
  for (const TestFunction& f : TestFunctions()) {
    if (f.name != name) continue;
    Evaluator eval(f, seed);
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string cmd;
      in >> cmd;
      Point x;
      double v;
      while (in >> v) x.push_back(v);
      if (x.size() != f.params.size()) {
        std::cout << "error expected " << f.params.size() << " values" << std::endl;
        continue;
      }
      if (cmd == "eval") {
        const std::optional<double> y = eval.Eval(x);
        if (y) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "ok %.17g", *y);
          std::cout << buf << std::endl;
        } else {
          std::cout << "fail" << std::endl;
        }
      } else if (cmd == "regret") {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", eval.Regret(x));
        std::cout << buf << std::endl;
      } else {
        std::cout << "error unknown command" << std::endl;
      }
    }
    return 0;
  }
  std::cerr << "unknown function " << name << "\n";
  return 2;
}

}  // namespace
}  // namespace ratchet::bench

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "run") return ratchet::bench::Run(argc, argv);
  if (cmd == "list") return ratchet::bench::List();
  if (cmd == "serve" && argc == 4) return ratchet::bench::Serve(argv[2], std::stoull(argv[3]));
  std::cerr << "usage: bench_search run [options] | list | serve FUNCTION SEED\n";
  return 2;
}
