// [judge]: a separate program that scores the writer's work (the rubric
// template: the writer edits a document, the judge scores each criterion).
// ratchet does not run the judge itself: the loop's protected run command
// does (templates/rubric/judge.py), and finds it in its environment:
//   RATCHET_JUDGE          the command, {model} expanded, shell-quoted words
//   RATCHET_JUDGE_MODEL    the model label ("" when none)
//   RATCHET_JUDGE_TIMEOUT  seconds one judgement may take
//   [judge]
//   command = ["claude", "-p", "--model", "{model}", "--output-format", "json"]
//   model = "opus"
//   timeout = "5m"
// A writer must not grade its own work, so `ratchet run` refuses a judge
// that is the writer: the same command as the proposer's ([propose.agent]
// or [propose.script], {model} expanded), or the same model (the `model`
// key, else the value of --model / -m in the command) when both name one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/config_section.h"

namespace ratchet {

struct JudgeConfig {
  std::vector<std::string> argv;  // {model} already expanded
  std::string model;
  double timeout_s = 300;
};

/// A command and the model it runs, as far as the configuration says.
struct CommandIdentity {
  std::vector<std::string> argv;  // {model} expanded
  std::string model;              // "" when unknown
};

/// Reads [judge] strictly. Errors name FILE:LINE:COL.
bool ReadJudgeConfig(ConfigSection& section, JudgeConfig* judge, std::string* err);
/// The writer: the chosen proposer's command and model. *known is false for
/// a proposer without a command (the built-in search), which cannot be a judge.
bool WriterIdentity(const LoopConfig& config, CommandIdentity* writer, bool* known,
                    std::string* err);
/// The model a command line names with --model X, --model=X or -m X; "".
std::string ModelInArgv(const std::vector<std::string>& argv);
/// "" when the judge is not the writer; else why it is refused.
std::string JudgeIsWriter(const CommandIdentity& judge, const CommandIdentity& writer);
/// The environment the run command gets (see the header comment).
std::vector<std::pair<std::string, std::string>> JudgeEnv(const JudgeConfig& judge);
/// Words quoted for a POSIX shell: `a 'b c' 'it'\''s'`.
std::string ShellQuoteWords(const std::vector<std::string>& words);

/// [judge] checked against the writer, for `ratchet run`: on success the
/// judge's variables are appended to config->env. Does nothing without [judge].
bool ApplyJudge(LoopConfig* config, std::string* err);

}  // namespace ratchet
