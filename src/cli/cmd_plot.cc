// ratchet plot DIR --out progress.svg|.png: the dashboard's progress chart
// as a file.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "web/loop_directory.h"
#include "web/plot.h"

namespace ratchet {
namespace {

struct PlotArgs {
  std::string dir = ".";
  std::string out = "progress.svg";
  PlotSize size;
  std::string title;
  std::string metric;  // another recorded metric than the loop's own
};

int RunPlot(const PlotArgs& args) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(args.dir, &paths, &err)) return Fail(err);
  std::unique_ptr<LoopDirectory> loop;
  if (!OpenLoopDirectory(paths.dir, &loop, &err)) return Fail(err);
  LedgerView ledger;
  if (!loop->LoadLedger(&ledger, &err)) return Fail(err);
  LoopSettings settings = loop->Settings();
  ChartOptions options;
  options.metric_name = settings.metric_name.empty() ? "metric" : settings.metric_name;
  options.minimize = settings.minimize;
  options.target = settings.target;
  options.title = args.title;
  if (!args.metric.empty() && args.metric != options.metric_name) {
    // Another metric every run printed (e.g. a rubric's criterion.clarity):
    // the same experiments, kept or not as they were, with that value.
    size_t found = 0;
    for (Experiment& e : ledger.experiments) {
      auto it = e.metrics.find(args.metric);
      e.metric = it == e.metrics.end() ? std::nullopt : std::optional<double>(it->second);
      found += it != e.metrics.end();
    }
    if (found == 0) return Fail("no experiment recorded a metric named " + args.metric);
    options.metric_name = args.metric;
    options.target.reset();
  }
  if (!WritePlot(ledger.experiments, options, args.out, args.size, &err)) return Fail(err);
  ChartModel model = BuildChartModel(ledger.experiments, options);
  size_t kept = 0;
  for (const ChartMark& m : model.marks) kept += m.kept;
  std::printf("ratchet plot: wrote %s (%zu experiments, %zu kept, %zu failed)\n", args.out.c_str(),
              model.points(), kept, model.failures.size());
  return 0;
}

}  // namespace

void AddPlotCommand(CLI::App& app) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plot",
      "Draw the progress chart of a loop to a file: every experiment's metric, kept ones "
      "labelled, the running best, the target, failures apart. Read-only.");
  cmd->add_option("dir", args->dir, "loop directory (default: .)");
  cmd->add_option("-o,--out", args->out, "output file, .svg or .png (default progress.svg)");
  cmd->add_option("--width", args->size.width, "width in pixels (default 960)")
      ->check(CLI::Range(320.0, 8000.0));
  cmd->add_option("--height", args->size.height, "height in pixels (default 480)")
      ->check(CLI::Range(240.0, 8000.0));
  cmd->add_option("--metric", args->metric,
                  "Plot another recorded metric (e.g. criterion.clarity) instead of the loop's");
  cmd->add_option("--title", args->title, "chart title (default: '<metric> by experiment')");
  cmd->callback([args] { ExitCode() = RunPlot(*args); });
}

}  // namespace ratchet
