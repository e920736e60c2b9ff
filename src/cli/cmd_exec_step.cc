// `ratchet exec-step SPEC RESULT`: the node's half of the Slurm executor
// (exec/slurm_runner.h). Runs the step SPEC describes with the local runner,
// sandbox, cgroup and deadline included, and writes its RunResult to RESULT.
// Hidden from --help: ratchet's own jobs run it, users do not. SIGTERM and
// SIGINT (scancel, a node shutting down) stop the step as a cancel, so that
// a result is still written.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/durable_file.h"
#include "base/read_file.h"
#include "cli/commands.h"
#include "exec/local_runner.h"
#include "exec/step_wire.h"

namespace ratchet {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnStopSignal(int) { g_cancel = true; }

int ExecStep(const std::string& spec_path, const std::string& result_path) {
  std::string text, err;
  if (!ReadWholeFile(spec_path, &text, &err)) {
    std::fprintf(stderr, "ratchet exec-step: %s\n", err.c_str());
    return 2;
  }
  RunSpec spec;
  if (!RunSpecFromJson(text, &spec, &err)) {
    std::fprintf(stderr, "ratchet exec-step: %s: %s\n", spec_path.c_str(), err.c_str());
    return 2;
  }
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  spec.cancel = &g_cancel;
  LocalProcessRunner runner;
  const RunResult result = runner.Run(spec);
  if (!ReplaceFile(result_path, RunResultToJson(result), &err)) {
    std::fprintf(stderr, "ratchet exec-step: %s\n", err.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void AddExecStepCommand(CLI::App& app) {
  auto spec = std::make_shared<std::string>();
  auto result = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "exec-step", "Run one step of an experiment on a cluster node (ratchet's Slurm jobs)");
  cmd->group("");  // internal
  cmd->add_option("spec", *spec, "the step, as ratchet wrote it")->required();
  cmd->add_option("result", *result, "where its result goes")->required();
  cmd->callback([spec, result] { ExitCode() = ExecStep(*spec, *result); });
}

}  // namespace ratchet
