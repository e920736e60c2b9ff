// Reading what a coding agent printed: its token and cost usage, its final
// message, and the one-line description it ends with. Pure functions over the
// captured output (stdout and stderr interleaved), so any CLI works:
//   - Claude Code `--output-format json`: one result object
//     {"type":"result","is_error":false,"result":"...","total_cost_usd":0.12,
//      "usage":{"input_tokens":..,"cache_creation_input_tokens":..,
//               "cache_read_input_tokens":..,"output_tokens":..}}
//     (`stream-json` ends with the same object; older versions say cost_usd);
//   - Codex `exec --json`: JSON lines; "turn.completed" events carry
//     {"usage":{"input_tokens":..,"cached_input_tokens":..,"output_tokens":..}}
//     and "item.completed" events of type agent_message carry the text;
//   - anything else: plain text, no usage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/experiment.h"

namespace ratchet {

struct AgentOutput {
  /// Tokens and money, when the output reports them. Input tokens include
  /// cached ones (Claude's cache_creation_ and cache_read_input_tokens are
  /// added; Codex's input_tokens already include cached_input_tokens).
  Usage usage;
  bool has_usage = false;
  /// The agent's final message: the JSON result text when there is one,
  /// otherwise the whole output.
  std::string final_text;
  bool structured = false;   // final_text came from a JSON report
  bool is_error = false;     // the JSON report says the agent failed
  std::string error_detail;  // e.g. "error_max_turns"
};

AgentOutput ParseAgentOutput(const std::string& output);

/// The description and hypothesis an agent ends its message with:
/// "DESCRIPTION: <one line>" and optionally "HYPOTHESIS: <one line>" (case
/// and markdown emphasis ignored; the last of each wins). Without a
/// DESCRIPTION line, the last non-empty line of `text`.
struct AgentSummary {
  std::string description;
  std::string hypothesis;
  bool marked = false;  // the DESCRIPTION line was there
};
AgentSummary ExtractSummary(const std::string& text);

/// Every top-level JSON object that parses inside `text`, in order (text
/// around and between them, e.g. log lines or markdown fences, is skipped).
/// Each is returned as its source text.
std::vector<std::string> FindJsonObjects(const std::string& text, size_t max_objects = 10000);

}  // namespace ratchet
