// The command line of an external agent ([propose.agent] and [review]): an
// argument list with {placeholders}, how the prompt reaches it, a timeout.
//   command = ["claude", "-p", "--output-format", "json"]   # an argument list
//   command = "codex exec --json -"                          # or words in one string
//   input = "stdin"                                          # or "file"
//   timeout = "15m"
// A string is split into words as a shell would (quotes group words,
// backslash escapes) but nothing else: no variables, pipes or globs. For
// those, write ["sh", "-c", "..."]. Placeholders are replaced in every
// argument: {prompt_file}, {prompt}, {model}, {run_dir}, {experiment},
// {worktree}, and what the owner adds (see ReadAgentCommand); "{{" and "}}"
// are literal braces.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config_section.h"

namespace ratchet {

struct AgentCommand {
  enum class Input { kStdin, kFile };
  std::vector<std::string> argv;  // with placeholders, as written
  Input input = Input::kStdin;
  double timeout_s = 900;
};

/// Reads command, input and timeout from `section`. `placeholders` are the
/// names allowed in the arguments; an unknown one is an error at its
/// position. Errors are recorded in `section` (see ConfigSection::ok()).
void ReadAgentCommand(ConfigSection& section, const std::vector<std::string>& placeholders,
                      double default_timeout_s, AgentCommand* command);

/// Splits a command line into words: whitespace separates, '...' and "..."
/// group, backslash escapes the next character (not inside '...'). False
/// with a message on an unterminated quote.
bool SplitWords(const std::string& line, std::vector<std::string>* words, std::string* err);

/// Replaces {name} by values.at(name) in every argument. The names were
/// checked by ReadAgentCommand; an unknown one is left as written.
std::vector<std::string> ExpandArgv(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& values);

/// The {names} used in `arg`; false with a message on a lone brace.
bool PlaceholdersIn(const std::string& arg, std::vector<std::string>* names, std::string* err);

}  // namespace ratchet
