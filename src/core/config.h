// The loop contract: ratchet.toml, parsed and validated. Each section that
// belongs to a pluggable part ([propose.<kind>], [outer], [review]) is kept as
// a ConfigSection for that part to read.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config_section.h"

namespace ratchet {

enum class Goal { kMin, kMax };

/// True when `a` is better than `b` by more than `delta` under `goal`.
inline bool BetterFor(Goal goal, double a, double b, double delta = 0) {
  return goal == Goal::kMin ? a < b - delta : a > b + delta;
}

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
  /// Shell command line. Without `serve`: untrusted, run in the experiment's
  /// working copy. With `serve`: trusted like [verify] (run in the loop
  /// directory), talking to the candidate's `serve` over fds 3 and 4.
  std::string command;
  std::string serve;
  When when = When::kBefore;
  double timeout_s = 600;
};

/// A trusted step: its command is built only from protected files, and only
/// its output gives the metric and the constraints.
struct VerifyConfig {
  std::string command;  // run in the loop directory; "" when the loop has none
  /// The candidate's side (untrusted, sandboxed, in the working copy): its
  /// stdin and stdout are the verifier's fds 3 and 4.
  std::string serve;
  /// How many independent instances of `serve` (1 or 2): a second one, on
  /// the verifier's fds 5 and 6, answers probes the first must not see.
  int servers = 1;
  double timeout_s = 600;
  /// A run's printed claim about the metric that differs from the verified
  /// value by more than this many noise standard deviations (or by more than
  /// claim_tolerance when there is no noise estimate) rejects the candidate.
  double claim_sigmas = 4;
  double claim_tolerance = 0;  // absolute; 0: exact (up to rounding)
};

/// A trusted preparation in the loop directory before the baseline, and
/// again whenever one of its outputs is missing.
struct PrepareConfig {
  std::string command;               // "" when the loop has none
  std::vector<std::string> outputs;  // globs of generated protected files
  double timeout_s = 3600;
};

/// What a worker gets: its index and the variables set for it.
struct SlotConfig {
  std::string name;  // RATCHET_SLOT
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> sbatch;  // this worker's job options (Slurm executor)
};

/// [executor]: where build, gates and runs execute. The verifier, its model
/// servers and proposers always run on this machine.
struct ExecutorConfig {
  std::string kind = "local";        // "local", or "slurm" (exec/slurm_runner.h)
  std::vector<std::string> sbatch;   // options for every job, e.g. "--partition=gpu"
  double poll_s = 0.25;              // between squeue calls
  bool slurm() const { return kind == "slurm"; }
};

/// How untrusted steps run (see core/runner.h SandboxSpec).
struct SandboxConfig {
  /// Refuse to run untrusted steps where the sandbox cannot work. false: run
  /// them as plain processes, said in `ratchet status` and every ledger row.
  bool required = true;
  bool network = false;                // for build, gates and runs
  std::vector<std::string> readable;   // extra host paths shown read-only
  std::vector<std::string> writable;   // extra host paths shown read-write (a hole: use sparingly)
};

/// [prune] (core/prune.h): stopping clearly losing runs early.
struct PruneConfig {
  std::string rule;   // "" (off), "median", "incumbent" or "halving"
  std::string value;  // the progress key compared, e.g. "loss"
  Goal goal = Goal::kMin;                   // of that value
  double warmup = 0.2;                      // no checkpoint before this fraction of the budget
  std::vector<double> at = {0.25, 0.5, 0.75};  // checkpoints, fractions of the budget
  int patience = 2;                         // worse at this many checkpoints in a row
  double percentile = 50;                   // median rule: 50 is the median
  int min_runs = 3;                         // median, halving: earlier runs needed
  double eta = 3;                           // halving: the best 1/eta go on
  double sigmas = 2;                        // noise bar, in run-to-run standard deviations
  double margin = 0;                        // added to the bar (absolute)
  bool enabled() const { return !rule.empty(); }
  bool Better(double a, double b, double delta = 0) const { return BetterFor(goal, a, b, delta); }
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
  /// The run is killed at budget_s + overhead_s (when that is before the
  /// timeout): training time is ratchet's clock, not the candidate's word.
  std::optional<double> overhead_s;
  double grace_s = 5;             // SIGTERM to SIGKILL
  /// A smoke run of each candidate before its full run, with this budget
  /// (RATCHET_BUDGET_SECONDS): one that crashes, prints no progress or shows
  /// NaN costs these seconds instead of a budget. 0: none.
  double preflight_s = 0;
  uint64_t log_limit_bytes = 16ull << 20;
  std::vector<std::pair<std::string, std::string>> env;
  /// Loop-directory paths (prepared data) shown read-only at the same place
  /// in the working copy, for build, gates and run.
  std::vector<std::string> sees;
  uint64_t memory_bytes = 0;      // per step; 0: no limit
  uint64_t max_pids = 0;
  uint64_t disk_bytes = 0;        // the largest file a step may write
  int workers = 1;                // experiments in flight at once
  std::vector<SlotConfig> slots;  // one per worker (or none)
  /// A winner whose incumbent moved while it ran: "rebase" applies it to the
  /// current incumbent and keeps that; "rerun" applies it and runs it again.
  std::string moved = "rebase";

  // [prepare], [verify], [sandbox], [prune]
  PrepareConfig prepare;
  PruneConfig prune;
  VerifyConfig verify;
  SandboxConfig sandbox;
  ExecutorConfig executor;

  /// The deadline of one run of the command.
  double RunDeadline() const {
    if (overhead_s && budget_s > 0 && (timeout_s <= 0 || budget_s + *overhead_s < timeout_s))
      return budget_s + *overhead_s;
    return timeout_s;
  }
  /// The deadline of the preflight: its budget plus the overhead, or plus
  /// the slack a full run has past its budget (timeout - budget).
  double PreflightDeadline() const {
    if (overhead_s) return preflight_s + *overhead_s;
    return preflight_s + std::max(0.0, timeout_s - budget_s);
  }

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
  double noise_floor = 0;         // the run-to-run noise is taken as at least this

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
  bool Better(double a, double b, double delta = 0) const { return BetterFor(goal, a, b, delta); }
};

/// Parses and validates ratchet.toml text. Every error names FILE:LINE:COL
/// and what is allowed. Extension sections are kept unread in
/// propose_sections / outer / review; their owners call Finish() on them.
bool ParseLoopConfig(const std::string& text, const std::string& file, LoopConfig* config,
                     std::string* err);

}  // namespace ratchet
