// `ratchet note DIR TEXT`: guidance for the proposals of a loop, running or
// not. Recorded in the ledger as a "note" event with its time; `ratchet run`
// reads new notes before each proposal and adds them to its guidance ("note
// from the user (<time>): TEXT"), where an agent's prompt and a script's
// RATCHET_GUIDANCE show it. Without TEXT, lists the notes so far.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/loop_dir.h"
#include "cli/user_event.h"
#include "notify/ledger_steering.h"

namespace ratchet {
namespace {

struct NoteOptions {
  std::string dir;
  std::vector<std::string> words;
};

int Note(const NoteOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err);
  std::string text;
  for (const std::string& w : options.words) text += (text.empty() ? "" : " ") + w;
  if (text.empty()) {
    std::vector<LedgerEvent> events;
    if (!LoadAllEvents(paths, &events, &err)) return Fail(err);
    int n = 0;
    for (const LedgerEvent& e : events) {
      if (e.kind != "note") continue;
      std::string line = NoteGuidanceLine(e);
      if (!line.empty()) std::printf("%s (after #%d)\n", line.c_str(), e.experiment_id), ++n;
    }
    if (n == 0) std::printf("no notes yet: `ratchet note %s \"TEXT\"` adds one\n", options.dir.c_str());
    return 0;
  }
  if (text.find('\n') != std::string::npos) return Fail("a note is one line");
  if (text.size() > 2000) return Fail("a note is at most 2000 characters");
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  double at = 0;
  if (!AddUserEvent(paths, "note", NoteDetail(text), &at, &err)) return Fail(err);
  std::printf("noted at %s; every later proposal sees it\n", FormatUtcMinute(at).c_str());
  if (config.propose_kind == "search")
    std::printf("(the built-in search reads no guidance text; agents and scripts do)\n");
  return 0;
}

}  // namespace

void AddNoteCommand(CLI::App& app) {
  auto options = std::make_shared<NoteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "note",
      "Steer a loop, running or not: add TEXT as guidance that every later proposal sees "
      "(an agent's prompt, a script's RATCHET_GUIDANCE), recorded in the ledger with its "
      "time. Without TEXT, list the notes.");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_option("text", options->words, "The note, e.g. \"try a wider MLP\"");
  cmd->callback([options] { ExitCode() = Note(*options); });
}

}  // namespace ratchet
