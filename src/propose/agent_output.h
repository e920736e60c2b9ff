// Reading what a coding agent printed: what it spent, whether it failed and
// why in its own words, its final message, and the one-line description it
// ends with. Pure functions over the captured output (stdout and stderr
// interleaved), fed line by line as it arrives, so a run that is killed half
// way still has its spend counted. Any CLI works:
//   - Claude Code `-p --output-format stream-json --verbose`
//     (`--include-partial-messages` for exact output tokens of a killed run):
//     per API message, "stream_event" message_start/message_delta and
//     "assistant" events carry the usage of that call; "result" events are
//     the report: total_cost_usd, modelUsage (every model, sub-agents
//     included), is_error, subtype (error_max_turns, error_max_budget_usd,
//     error_during_execution), api_error_status and the error text in
//     result or errors. `--output-format json` prints the result alone.
//   - Codex `exec --json`: "turn.completed" carries the turn's usage (input
//     including cached tokens), "turn.failed" the error that ended it,
//     "error" events a retry ("Reconnecting... 1/5 (...)") or the last error,
//     "item.completed" agent_message items the text. A killed Codex prints no
//     usage; its session file does (ParseCodexSession).
//   - opencode `run --format json`: a "step_finish" event per model call,
//     with its tokens and cost (summed), "text" events, and an "error" event
//     ({"error":{"name":"APIError","data":{"message":..,"statusCode":..}}}).
//   - anything else: plain text, no usage.
//
// The spend counted: Claude Code's reports are running totals of the whole
// run (a run with background tasks prints one result per batch of work), so
// the largest reported cost and token counts are kept and a later, smaller
// report never lowers them (summing would count twice). Codex's turns are
// summed, and so are opencode's steps. The usage streamed message by message is summed too and priced
// with a PriceTable; the larger of the reported and the streamed spend
// counts, so a run killed before it reported still reaches stop.cost_usd.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/experiment.h"
#include "propose/agent_prices.h"

namespace ratchet {

/// One model's part of the spend, for the record (agent.json).
struct ModelSpend {
  ModelTokens tokens;
  double cost_usd = 0;
  bool priced = false;  // cost_usd is known (reported, or from the price table)
};

struct AgentOutput {
  /// The spend counted (see above). Input tokens include cached ones.
  Usage usage;
  bool has_usage = false;   // anything at all reported or streamed
  bool reported = false;    // a final report: a Claude result, a Codex turn.completed
  bool streamed = false;    // per-call usage was seen as it happened
  int reports = 0;          // Claude result events
  std::map<std::string, ModelSpend> models;  // per model, where the output says
  /// Streamed tokens of models with no price: their cost is not counted.
  std::vector<std::string> unpriced_models;

  /// The agent's final message: the report's result or the last agent
  /// message when there is one, otherwise the whole output.
  std::string final_text;
  bool structured = false;  // final_text came from a JSON report

  /// The CLI said it failed: its own error text and its kind.
  bool is_error = false;
  std::string error_text;  // "API Error: 529 Overloaded", "Reached maximum budget ($5)"
  std::string error_kind;  // "HTTP 529 overloaded_error", "error_max_turns", "turn.failed"
  int api_status = 0;      // the HTTP status of a failed API call, when known
  /// An error the CLI printed that did not end the run by itself (a Codex
  /// "error" event): the likely reason when it then exits non-zero.
  std::string last_error;
  /// The last error the CLI reported and then retried past (a Codex
  /// "Reconnecting...", a Claude Code api_retry): not a failure by itself,
  /// but the likely cause when the run then timed out.
  std::string last_retry;
};

/// Reads an agent's output one line at a time.
class AgentOutputParser {
 public:
  /// `prices` prices streamed usage (null: the built-in table).
  explicit AgentOutputParser(const PriceTable* prices = nullptr);
  ~AgentOutputParser();
  AgentOutputParser(const AgentOutputParser&) = delete;
  AgentOutputParser& operator=(const AgentOutputParser&) = delete;
  /// One line of output, without its newline.
  void Feed(std::string_view line);
  /// Codex's session file (rollout-*.jsonl): its last token_count is the
  /// thread's running total, there even when Codex was killed.
  void FeedCodexSession(const std::string& text);
  /// The result. `rest` is the output as a whole (or its end), used when no
  /// line was a JSON object (a pretty-printed report) and for plain text.
  AgentOutput Finish(const std::string& rest);

 private:
  struct State;  // agent_output.cc
  std::unique_ptr<State> s_;
  const PriceTable* prices_;
};

/// The whole output at once (for tests and the reviewer).
AgentOutput ParseAgentOutput(const std::string& output, const PriceTable* prices = nullptr);

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
