// Each subcommand adds itself to the CLI11 app; main.cc lists them.
#pragma once

namespace CLI {
class App;
}

namespace ratchet {

void AddInitCommand(CLI::App& app);
void AddRunCommand(CLI::App& app);
void AddStatusCommand(CLI::App& app);
void AddLogCommand(CLI::App& app);
void AddShowCommand(CLI::App& app);
void AddExportCommand(CLI::App& app);
void AddServeCommand(CLI::App& app);
void AddPlotCommand(CLI::App& app);
void AddPromptCommand(CLI::App& app);
void AddNoteCommand(CLI::App& app);
void AddPauseCommands(CLI::App& app);  // pause and resume
void AddRerunCommand(CLI::App& app);
void AddScheduleCommand(CLI::App& app);
void AddFinalizeCommand(CLI::App& app);
void AddAuditCommand(CLI::App& app);
void AddExecStepCommand(CLI::App& app);  // hidden: a Slurm job's step

/// The exit code a subcommand's callback sets (CLI11 callbacks return void).
int& ExitCode();

}  // namespace ratchet
