// `ratchet export DIR --tsv FILE`: results.tsv in autoresearch's columns.
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/durable_file.h"
#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "store/sqlite_ledger.h"
#include "store/tsv_export.h"

namespace ratchet {
namespace {

struct ExportOptions {
  std::string dir;
  std::string tsv;
  std::string json;
};

bool WriteOut(const std::string& path, const std::string& text, std::string* err) {
  if (path == "-") {
    std::cout << text;
    return true;
  }
  return ReplaceFile(path, text, err);
}

int Export(const ExportOptions& options) {
  if (options.tsv.empty() && options.json.empty())
    return Fail("export needs --tsv FILE or --json FILE ('-' for standard output)");
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(&err)) return Fail(err);
  std::vector<Experiment> history;
  if (!ledger->LoadExperiments(&history, &err)) return Fail(err);
  if (!options.tsv.empty() &&
      !WriteOut(options.tsv, ResultsTsv(history, config.metric_name), &err))
    return Fail(err);
  if (!options.json.empty() && !WriteOut(options.json, ExperimentsToJson(history) + "\n", &err))
    return Fail(err);
  return 0;
}

}  // namespace

void AddExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write the loop's results: --tsv in autoresearch's results.tsv columns "
                "(commit, metric, memory_gb, status, description, then the other metrics), "
                "--json with every field");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_option("--tsv", options->tsv, "results.tsv to write ('-' for standard output)");
  cmd->add_option("--json", options->json, "JSON file to write ('-' for standard output)");
  cmd->callback([options] { ExitCode() = Export(*options); });
}

}  // namespace ratchet
