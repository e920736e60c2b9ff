// ratchet serve DIR: the live dashboard of a loop, read-only.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "web/loop_directory.h"
#include "web/server.h"

namespace ratchet {
namespace {

struct ServeArgs {
  std::string dir = ".";
  ServeOptions options;
};

int RunServe(const ServeArgs& args) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(args.dir, &paths, &err)) return Fail(err);
  std::unique_ptr<LoopDirectory> loop;
  if (!OpenLoopDirectory(paths.dir, &loop, &err)) return Fail(err);

  // The server's threads inherit a mask without SIGINT/SIGTERM, so this
  // thread alone receives them and can stop the server cleanly.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  DashboardServer server(args.options, std::move(loop));
  if (!server.Start(&err)) return Fail(err);
  const std::string& host = args.options.host;
  std::string url = "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                    ":" + std::to_string(server.port()) + "/";
  std::printf("ratchet serve: %s%s  (read-only; Ctrl-C to stop)\n", url.c_str(),
              args.options.token.empty() ? "" : "?token=<your token>");
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  server.Stop();
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve a live dashboard of a loop: the progress chart, where the loop is now, and every "
      "experiment with its diff and log. Read-only: it never writes the loop.");
  cmd->add_option("dir", args->dir, "loop directory (default: .)");
  cmd->add_option("--host", args->options.host,
                  "address to listen on (default 127.0.0.1; any other address requires --token)");
  cmd->add_option("--port", args->options.port, "port (default 8420; 0 picks a free one)");
  cmd->add_option("--token", args->options.token,
                  "secret every request must carry, as the query parameter ?token=SECRET (open "
                  "the page with it) or the header 'Authorization: Bearer SECRET'; others get "
                  "401. Required when --host is not a loopback address. Also read from "
                  "RATCHET_TOKEN, which keeps it out of the process list")
      ->envname("RATCHET_TOKEN");
  cmd->callback([args] { ExitCode() = RunServe(*args); });
}

}  // namespace ratchet
