// The loop contract: ratchet.toml, parsed and validated. Each section that
// belongs to a pluggable part ([propose.<kind>], [outer], [review]) is kept as
// a ConfigSection for that part to read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config_section.h"

namespace ratchet {

enum class Goal { kMin, kMax };

/// An inequality on a metric, e.g. "peak_mem_mb <= 8000".
struct Constraint {
  enum class Op { kLess, kLessEqual, kGreater, kGreaterEqual };
  std::string metric;
  Op op = Op::kLessEqual;
  double bound = 0;
  std::string text;  // as written
  bool Holds(double value) const;
};
/// Parses "name <= 8000" (also <, >=, >). False with a message otherwise.
bool ParseConstraint(const std::string& text, Constraint* out, std::string* err);

struct GateConfig {
  enum class When { kBefore, kAfter };
  std::string name;
  std::string command;  // shell command line, run in the loop directory
  When when = When::kBefore;
  double timeout_s = 600;
};

struct LoopConfig {
  std::string file;  // path of ratchet.toml, for messages

  // [loop]
  std::string tag = "main";  // the branch is ratchet/<tag>
  uint64_t seed = 0;

  // [edit]
  std::vector<std::string> edit_files;       // globs; only these may change
  std::vector<std::string> protected_files;  // globs; content must never change

  // [run]
  std::string build;              // optional shell command, not in the budget
  double build_timeout_s = 600;
  std::string command;            // shell command line of one experiment
  double budget_s = 0;            // exported as RATCHET_BUDGET_SECONDS
  double timeout_s = 0;           // hard limit of one run
  double grace_s = 5;             // SIGTERM to SIGKILL
  uint64_t log_limit_bytes = 16ull << 20;
  std::vector<std::pair<std::string, std::string>> env;

  // [metric]
  std::string metric_name;
  Goal goal = Goal::kMin;
  std::string metric_regex;       // optional: one capture group, last match wins
  std::vector<Constraint> constraints;

  // [[gate]]
  std::vector<GateConfig> gates;

  // [accept]
  double min_delta = 0;           // a keep must improve by more than this
  int baseline_repeats = 1;       // runs of the baseline (mean and spread)
  int confirm = 0;                // extra runs of a would-be keep
  double noise_sigmas = 2;        // a kept mean must beat this many std errors

  // [stop] (absent = no limit)
  std::optional<int> max_experiments;
  std::optional<double> target;
  std::optional<double> wall_s;
  std::optional<int> patience;              // experiments without a new best
  std::optional<double> max_cost_usd;       // proposer spending
  std::optional<int64_t> max_tokens;
  std::optional<int> max_consecutive_failures;  // circuit breaker

  // [propose]
  std::string propose_kind = "script";
  /// [propose.<kind>] tables, by kind, for the proposers to read.
  std::map<std::string, ConfigSection> propose_sections;

  // Sections owned by other parts, absent if not in the file.
  ConfigSection outer;   // [outer]
  ConfigSection review;  // [review]
  // loops: read outside the engine, by `ratchet run`: [notify] (src/notify)
  // and [judge] (a separate scorer, checked not to be the writer).
  ConfigSection notify;  // [notify]
  ConfigSection judge;   // [judge]

  /// True when `a` is better than `b` by more than `delta`.
  bool Better(double a, double b, double delta = 0) const {
    return goal == Goal::kMin ? a < b - delta : a > b + delta;
  }
};

/// Parses and validates ratchet.toml text. Every error names FILE:LINE:COL
/// and what is allowed. Extension sections are kept unread in
/// propose_sections / outer / review; their owners call Finish() on them.
bool ParseLoopConfig(const std::string& text, const std::string& file, LoopConfig* config,
                     std::string* err);

}  // namespace ratchet
