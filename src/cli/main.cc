// ratchet: verifier-gated experiment loops. Each subcommand is one file.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "ratchet_version.h"  // generated at build time: RATCHET_VERSION

namespace ratchet {
int& ExitCode() {
  static int code = 0;
  return code;
}
}  // namespace ratchet

int main(int argc, char** argv) {
  CLI::App app{
      "ratchet runs experiment loops: a proposer changes the code, the change runs under a "
      "time budget, a verifier scores it, and ratchet keeps it (a git commit) or reverts it, "
      "recording everything in .ratchet/ledger.db.",
      "ratchet"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ratchet " RATCHET_VERSION);
  ratchet::AddInitCommand(app);
  ratchet::AddRunCommand(app);
  ratchet::AddStatusCommand(app);
  ratchet::AddLogCommand(app);
  ratchet::AddShowCommand(app);
  ratchet::AddExportCommand(app);
  ratchet::AddServeCommand(app);
  ratchet::AddPlotCommand(app);
  ratchet::AddPromptCommand(app);
  ratchet::AddNoteCommand(app);
  ratchet::AddPauseCommands(app);
  ratchet::AddRerunCommand(app);
  ratchet::AddScheduleCommand(app);
  ratchet::AddFinalizeCommand(app);
  ratchet::AddAuditCommand(app);
  ratchet::AddExecStepCommand(app);
  CLI11_PARSE(app, argc, argv);
  return ratchet::ExitCode();
}
