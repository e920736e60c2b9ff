// The prompt an agent proposer gets, built from plain inputs (pure; the
// agent proposer gathers them, see prompt_inputs.h). Its parts, in order:
// what ratchet is doing; the loop's program.md (the skill); the goal and the
// best result so far; guidance from the outer loop; records of earlier
// experiments; and last the rules, ending with the DESCRIPTION line the
// agent must finish with.
//
// Everything recorded from earlier experiments (descriptions written by
// earlier agents, reasons, notes, run logs) is untrusted: a program can print
// anything. It goes in only inside <ratchet-data> blocks, truncated, with
// control characters removed and <, > and & escaped, so no text inside can
// close the block or pose as ratchet's own instructions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"

namespace ratchet {

struct PromptLimits {
  int history_rows = 15;    // the table of recent experiments
  int tried_rows = 40;      // older failed attempts, listed by description
  int notes_lines = 40;     // tail of .ratchet/notes.md
  int log_lines = 40;       // tail of the last run log
  size_t line_bytes = 400;  // any longer line of data is cut
};

/// The end of one earlier run's log.
struct LogTail {
  int experiment_id = 0;
  std::string status;  // of that experiment
  std::string path;    // relative to the loop directory
  std::string text;    // the whole log, or its end; cut further here
};

struct PromptInputs {
  int experiment_id = 0;
  const LoopConfig* config = nullptr;
  std::string program_name = "program.md";
  std::string program;  // its text (trusted: the loop's author wrote it)
  const std::vector<Experiment>* history = nullptr;  // finished, oldest first
  const Experiment* incumbent = nullptr;             // null before the baseline
  const std::vector<Experiment>* in_flight = nullptr;  // on other workers, no result yet
  std::vector<std::string> guidance;                 // from the outer loop
  std::string notes;                                 // .ratchet/notes.md ("" if none)
  std::optional<LogTail> last_log;
  PromptLimits limits;
};

std::string BuildPrompt(const PromptInputs& in);

/// A block of untrusted data: <ratchet-data name="NAME" source="SOURCE">,
/// the sanitised text, </ratchet-data>.
std::string FenceData(const std::string& name, const std::string& source, const std::string& text);

/// Makes text safe to place inside a data block: drops ANSI escape sequences
/// and control characters (tab and newline kept), escapes & < >, replaces
/// invalid UTF-8, and cuts lines longer than `line_bytes`.
std::string SanitizeData(const std::string& text, size_t line_bytes);

/// The last `lines` lines of `text` (a trailing newline does not count).
std::string TailLines(const std::string& text, int lines);

}  // namespace ratchet
