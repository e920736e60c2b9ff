// ratchet_web_fixture: makes a recorded loop for the dashboard's browser test
// and benchmark, writing the real SQLite ledger as `ratchet run` would.
//   ratchet_web_fixture DIR [--experiments 30] [--no-git] [--no-logs] [--seed 1]
//   ratchet_web_fixture DIR --append DESCRIPTION --metric 0.8
//   ratchet_web_fixture DIR --live-pid PID --live-id 32 --live-phase running
// Prints a JSON summary: {"experiments":30,"kept":7,"failed":5}.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "store/sqlite_ledger.h"
#include "web/testing/loop_fixture.h"

int main(int argc, char** argv) {
  using namespace ratchet;
  CLI::App app{"Makes a recorded loop for the dashboard's tests and benchmark"};
  std::string dir, append, live_phase = "running", live_progress = "step 5 loss 3.71";
  FixtureOptions options;
  bool no_git = false, no_logs = false;
  double metric = 0.5, live_elapsed = 12;
  long long live_pid = 0;
  int live_id = 0;
  app.add_option("dir", dir, "loop directory (created)")->required();
  app.add_option("--experiments", options.experiments, "experiments to record");
  app.add_option("--seed", options.seed, "random seed");
  app.add_flag("--no-git", no_git, "no git repository (faster)");
  app.add_flag("--no-logs", no_logs, "no run logs (faster)");
  app.add_option("--append", append, "append one kept experiment with this description");
  app.add_option("--metric", metric, "its metric");
  app.add_option("--live-pid", live_pid, "write live.json for this process");
  app.add_option("--live-id", live_id, "experiment live.json names");
  app.add_option("--live-phase", live_phase, "phase live.json names");
  app.add_option("--live-elapsed", live_elapsed, "seconds since the phase started");
  app.add_option("--live-progress", live_progress, "progress line");
  CLI11_PARSE(app, argc, argv);
  options.git = !no_git;
  options.logs = !no_logs;

  std::string err;
  std::filesystem::create_directories(dir + "/.ratchet");
  FixtureSummary summary;
  if (live_pid != 0) {
    if (!WriteFixtureLive(dir, live_pid, live_id, live_phase, live_elapsed, live_progress, &err)) {
      std::fprintf(stderr, "ratchet_web_fixture: %s\n", err.c_str());
      return 1;
    }
    std::printf("{}\n");
    return 0;
  }
  std::unique_ptr<SqliteLedger> ledger;
  bool ok =
      SqliteLedger::Open(dir + "/.ratchet/ledger.db", /*create=*/true, /*read_only=*/false, &ledger)
          .Report(&err);
  if (ok) {
    ok = append.empty()
             ? WriteLoopFixture(dir, ledger.get(), options, &summary, &err)
             : AppendFixtureExperiment(dir, ledger.get(), append, metric, &summary, &err);
  }
  if (!ok) {
    std::fprintf(stderr, "ratchet_web_fixture: %s\n", err.c_str());
    return 1;
  }
  std::printf("{\"experiments\":%d,\"kept\":%d,\"failed\":%d}\n", summary.experiments, summary.kept,
              summary.failed);
  return 0;
}
