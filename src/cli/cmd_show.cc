// `ratchet show DIR ID`: one experiment in full: metrics, runs, diff, log tail.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "core/accept.h"
#include "core/curve.h"
#include "store/sqlite_ledger.h"
#include "vcs/git_repo.h"

namespace ratchet {
namespace {

struct ShowOptions {
  std::string dir;
  int id = 0;
  int tail_lines = 30;
  bool no_diff = false;
};

std::string LastLines(const std::string& text, int n) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  while (n-- > 0 && pos != std::string::npos && pos > 0) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? text : text.substr(pos + 1);
}

// The key a curve is shown by: the one [prune] compares, else "loss", else
// the first the run printed.
std::string CurveKey(const LoopConfig& config, const Curve& curve) {
  if (!config.prune.value.empty()) return config.prune.value;
  for (const CurvePoint& p : curve)
    if (p.values.count("loss")) return "loss";
  return curve.empty() || curve.front().values.empty() ? "" : curve.front().values.begin()->first;
}

// The first full run's learning curve (the preflight's when it never got
// past that) next to that of the best it was proposed from, at ten moments
// of the budget (of the longer curve without one).
void PrintCurve(const LoopConfig& config, SqliteLedger* ledger,
                const std::vector<Experiment>& history, const Experiment& e,
                const std::vector<RunRecord>& runs) {
  const RunRecord* first = runs.empty() ? nullptr : FirstFullRun(runs);
  if (!first && !runs.empty()) first = &runs[0];
  if (!first || first->curve.empty()) return;
  const Curve& mine = first->curve;
  const std::string key = CurveKey(config, mine);
  if (key.empty()) return;
  Curve theirs;
  int their_id = 0;
  for (const Experiment& other : history) {
    if (other.id == e.id || other.status != Status::kKeep ||
        other.candidate_commit != e.parent_commit)
      continue;
    std::vector<RunRecord> other_runs;
    std::string err;
    if (!ledger->LoadRuns(other.id, &other_runs, &err)) continue;
    if (const RunRecord* full = FirstFullRun(other_runs)) {
      theirs = full->curve;
      their_id = other.id;
    }
  }
  double span = config.budget_s;
  if (span <= 0) span = std::max(mine.back().t, theirs.empty() ? 0.0 : theirs.back().t);
  if (span <= 0) return;
  std::printf("curve (%s at ratchet's clock, %zu points)%s:\n", key.c_str(), mine.size(),
              their_id ? (", next to #" + std::to_string(their_id) + ", the best it was proposed from")
                             .c_str()
                       : "");
  std::printf("  %8s %12s", "time", ("#" + std::to_string(e.id)).c_str());
  if (their_id) std::printf(" %12s", ("#" + std::to_string(their_id)).c_str());
  std::printf("\n");
  for (int k = 1; k <= 10; ++k) {
    const double t = span * k / 10;
    double a = 0, b = 0;
    const bool have_a = t <= mine.back().t + 1e-9 && ValueAt(mine, key, t, &a);
    const bool have_b = their_id && t <= theirs.back().t + 1e-9 && ValueAt(theirs, key, t, &b);
    if (!have_a && !have_b) continue;
    std::printf("  %8s %12s", FormatDuration(t).c_str(), have_a ? FormatMetric(a).c_str() : "-");
    if (their_id) std::printf(" %12s", have_b ? FormatMetric(b).c_str() : "-");
    std::printf("\n");
  }
}

int Show(const ShowOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(&err)) return Fail(err);
  std::vector<Experiment> history;
  if (!ledger->LoadExperiments(&history, &err)) return Fail(err);
  if (options.id < 1 || options.id > static_cast<int>(history.size()))
    return Fail("no experiment #" + std::to_string(options.id) + " (the loop has " +
                std::to_string(history.size()) + ")");
  const Experiment& e = history[options.id - 1];

  std::printf("experiment #%d%s\n", e.id, e.baseline ? " (baseline)" : "");
  std::printf("status:      %s%s%s\n", e.status == Status::kNone ? "unfinished" : StatusName(e.status),
              e.reason.empty() ? "" : ": ", e.reason.c_str());
  std::printf("description: %s\n", e.description.c_str());
  if (!e.hypothesis.empty()) std::printf("hypothesis:  %s\n", e.hypothesis.c_str());
  if (!e.params_json.empty()) std::printf("params:      %s\n", e.params_json.c_str());
  std::printf("proposer:    %s\n", e.proposer.c_str());
  std::printf("commits:     %s -> %s\n", Short(e.parent_commit).c_str(),
              e.candidate_commit.empty() ? "(none)" : Short(e.candidate_commit).c_str());
  if (e.metric)
    std::printf("%-12s %s (n=%d, spread %s)\n", (config.metric_name + ":").c_str(),
                FormatMetric(*e.metric).c_str(), e.metric_n, FormatMetric(e.metric_stddev).c_str());
  for (const auto& [name, value] : e.metrics)
    if (name != config.metric_name) std::printf("  %-22s %s\n", name.c_str(), FormatMetric(value).c_str());
  std::printf("time:        propose %s, build %s, run %s; cpu %s, peak memory %.0f MB\n",
              FormatDuration(e.propose_s).c_str(), FormatDuration(e.build_s).c_str(),
              FormatDuration(e.run_s).c_str(), FormatDuration(e.cpu_s).c_str(), e.peak_rss_mb);
  if (!e.usage.empty())
    std::printf("usage:       %lld tokens in, %lld out, $%.4f\n",
                static_cast<long long>(e.usage.input_tokens),
                static_cast<long long>(e.usage.output_tokens), e.usage.cost_usd);
  for (const std::string& w : e.warnings) std::printf("warning:     %s\n", w.c_str());
  if (!e.mechanisms.empty()) {
    std::string names;
    for (const std::string& m : e.mechanisms) names += (names.empty() ? "" : ", ") + m;
    std::printf("mechanisms:  %s\n", names.c_str());
  }
  std::vector<RunRecord> runs;
  if (ledger->LoadRuns(e.id, &runs, &err) && (runs.size() > 1 || FirstFullRun(runs) == nullptr)) {
    for (const RunRecord& r : runs)
      std::printf("  %s: %s %s, %s\n",
                  r.attempt == 0 ? "preflight" : ("run " + std::to_string(r.attempt) + " (" + r.purpose + ")").c_str(),
                  config.metric_name.c_str(), r.metric ? FormatMetric(*r.metric).c_str() : "-",
                  FormatDuration(r.wall_s).c_str());
  }
  PrintCurve(config, ledger.get(), history, e, runs);

  if (!options.no_diff && !e.candidate_commit.empty() && e.candidate_commit != e.parent_commit) {
    std::unique_ptr<GitRepo> repo;
    std::string diff;
    if (GitRepo::Open(paths.dir, &repo, &err) &&
        repo->Diff(e.parent_commit, e.candidate_commit, &diff, &err))
      std::printf("\n--- diff (%s) ---\n%s", e.diff_stat.c_str(), diff.c_str());
    else
      std::printf("\n--- diff: unavailable (%s) ---\n", err.c_str());
  }
  if (!e.log_path.empty()) {
    std::string log;
    if (ReadWholeFile(paths.dir + "/" + e.log_path, &log, &err))
      std::printf("\n--- %s (last %d lines) ---\n%s\n", e.log_path.c_str(), options.tail_lines,
                  LastLines(log, options.tail_lines).c_str());
  }
  return 0;
}

}  // namespace

void AddShowCommand(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand(
      "show", "Show one experiment of the loop in DIR: status and why, metrics, runs, timings, "
              "the diff against its parent, and the tail of its log");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_option("id", options->id, "Experiment number (1 is the baseline)")->required();
  cmd->add_option("--tail", options->tail_lines, "Lines of the log to show")->capture_default_str();
  cmd->add_flag("--no-diff", options->no_diff, "Leave out the diff");
  cmd->callback([options] { ExitCode() = Show(*options); });
}

}  // namespace ratchet
