#include "propose/agent_output.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace ratchet {
namespace {

// Output captured from the real CLIs (tests/agents/fixtures/README.md).
std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RATCHET_AGENT_FIXTURES) + "/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// As the proposer reads it: line by line as it arrives, then the tail.
AgentOutput Stream(const std::string& output, const std::string& session = "") {
  AgentOutputParser parser;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    parser.Feed(std::string_view(output).substr(start, end - start));
    start = end + 1;
  }
  if (!session.empty()) parser.FeedCodexSession(session);
  return parser.Finish(output);
}

TEST(AgentOutputTest, ClaudeCodeStreamOfAnEdit) {
  AgentOutput out = Stream(Fixture("claude_edit.jsonl"));
  EXPECT_TRUE(out.reported);
  EXPECT_TRUE(out.streamed);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.usage.input_tokens, 2250 + 9500 + 3100);
  EXPECT_EQ(out.usage.output_tokens, 180);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.023925);
  ASSERT_EQ(out.models.size(), 1u);
  EXPECT_EQ(out.models.at("claude-sonnet-4-5").tokens.cache_write, 3100);
  AgentSummary s = ExtractSummary(out.final_text);
  EXPECT_EQ(s.description, "lower x to 99");
  EXPECT_EQ(s.hypothesis, "x nearer 3 is better");
}

TEST(AgentOutputTest, ClaudeCodeSubAgentOnAnotherModelCounts) {
  // usage in the result covers the main thread only; modelUsage has both.
  AgentOutput out = Stream(Fixture("claude_subagent.jsonl"));
  EXPECT_EQ(out.usage.input_tokens, 5000 + 900 + 50 + 20);
  EXPECT_EQ(out.usage.output_tokens, 110 + 23);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.0167545);
  ASSERT_EQ(out.models.count("claude-haiku-5-5"), 1u);
  EXPECT_DOUBLE_EQ(out.models.at("claude-haiku-5-5").cost_usd, 0.0001045);
}

TEST(AgentOutputTest, ClaudeCodeResultsAreRunningTotals) {
  // Two results (a background task): the same totals, counted once; the
  // last one's text is the final message.
  AgentOutput out = Stream(Fixture("claude_background.jsonl"));
  EXPECT_EQ(out.reports, 2);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.030945);
  EXPECT_EQ(out.usage.output_tokens, 177);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "nothing to change");
}

TEST(AgentOutputTest, ClaudeCodeApiErrorIsAFailureInItsOwnWords) {
  AgentOutput out = Stream(Fixture("claude_api_529.jsonl"));
  EXPECT_TRUE(out.is_error);  // though subtype says "success"
  EXPECT_EQ(out.api_status, 529);
  EXPECT_EQ(out.error_kind, "HTTP 529 overloaded_error");
  EXPECT_EQ(out.error_text.rfind("API Error: 529 Overloaded.", 0), 0u) << out.error_text;
  EXPECT_NE(out.last_retry.find("API error 529"), std::string::npos) << out.last_retry;
  EXPECT_TRUE(out.reported);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0);
}

TEST(AgentOutputTest, ClaudeCodeBudgetStopHasItsSpend) {
  AgentOutput out = Stream(Fixture("claude_budget.jsonl"));
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.error_kind, "error_max_budget_usd");
  EXPECT_EQ(out.error_text, "Reached maximum budget ($0.05)");
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.075);
  EXPECT_EQ(out.usage.input_tokens, 20000);
}

TEST(AgentOutputTest, ClaudeCodeKilledBeforeItsReportStillCounts) {
  // SIGINT: Claude Code reports (error_during_execution). SIGKILL: nothing,
  // but the stream had the call's usage, priced here as Claude Code does.
  AgentOutput interrupted = Stream(Fixture("claude_interrupted.jsonl"));
  EXPECT_EQ(interrupted.reports, 1);
  EXPECT_DOUBLE_EQ(interrupted.usage.cost_usd, 0.00903);
  AgentOutput killed = Stream(Fixture("claude_killed.jsonl"));
  EXPECT_EQ(killed.reports, 0);
  EXPECT_FALSE(killed.reported);
  EXPECT_TRUE(killed.streamed);
  EXPECT_TRUE(killed.has_usage);
  EXPECT_EQ(killed.usage.input_tokens, interrupted.usage.input_tokens);
  EXPECT_EQ(killed.usage.output_tokens, 77);  // from message_delta, not message_start's 1
  EXPECT_NEAR(killed.usage.cost_usd, 0.00903, 1e-12);
  EXPECT_TRUE(killed.unpriced_models.empty());
}

TEST(AgentOutputTest, StreamedUsageOfAModelWithoutAPriceIsTokensOnly) {
  PriceTable none;
  AgentOutputParser parser(&none);
  parser.Feed(R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"m1",)"
              R"("model":"gateway-x","usage":{"input_tokens":100,"output_tokens":1}}}})");
  parser.Feed(R"({"type":"stream_event","api_message_id":"m1","event":{"type":"message_delta",)"
              R"("usage":{"output_tokens":40}}})");
  AgentOutput out = parser.Finish("");
  EXPECT_EQ(out.usage.input_tokens, 100);
  EXPECT_EQ(out.usage.output_tokens, 40);
  EXPECT_EQ(out.usage.cost_usd, 0);
  EXPECT_EQ(out.unpriced_models, std::vector<std::string>{"gateway-x"});
}

TEST(AgentOutputTest, CodexEditAndItsTurn) {
  AgentOutput out = Stream(Fixture("codex_edit.jsonl"));
  EXPECT_FALSE(out.is_error);
  EXPECT_TRUE(out.reported);
  EXPECT_EQ(out.usage.input_tokens, 3800);
  EXPECT_EQ(out.usage.output_tokens, 90);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "lower x to 99");
}

TEST(AgentOutputTest, CodexRecoveredReconnectIsNotAFailure) {
  AgentOutput out = Stream(Fixture("codex_reconnect.jsonl"));
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.last_retry.rfind("Reconnecting... 1/1", 0), 0u) << out.last_retry;
  EXPECT_EQ(out.last_error, "");
  EXPECT_EQ(out.usage.input_tokens, 3200);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "lower x to 99");
}

TEST(AgentOutputTest, CodexFailedTurnInItsOwnWords) {
  AgentOutput out = Stream(Fixture("codex_401.jsonl"));
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.error_kind, "turn.failed");
  EXPECT_EQ(out.api_status, 401);
  EXPECT_EQ(out.error_text.rfind("unexpected status 401 Unauthorized: invalid api key", 0), 0u)
      << out.error_text;
}

TEST(AgentOutputTest, KilledCodexSpendComesFromItsSessionFile) {
  AgentOutput stdout_only = Stream(Fixture("codex_killed.jsonl"));
  EXPECT_FALSE(stdout_only.has_usage);
  AgentOutput out =
      Stream(Fixture("codex_killed.jsonl"), Fixture("codex_killed.session.jsonl"));
  EXPECT_TRUE(out.has_usage);
  EXPECT_EQ(out.usage.input_tokens, 1700);  // 1500 + 200 cached
  EXPECT_EQ(out.usage.output_tokens, 60);
  // A complete run: the session file says what the turns said, not more.
  AgentOutput both = Stream(Fixture("codex_edit.jsonl"), Fixture("codex_edit.session.jsonl"));
  EXPECT_EQ(both.usage.input_tokens, 3800);
}

TEST(AgentOutputTest, OpencodeStepsAreSummed) {
  // Four calls (a refused bash, read, edit, text), each with its own cost.
  AgentOutput out = Stream(Fixture("opencode_edit.jsonl"));
  EXPECT_TRUE(out.reported);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.usage.input_tokens, 1300 + 1300 + 1200 + 1300);
  EXPECT_EQ(out.usage.output_tokens, 50 + 40 + 30 + 20);
  EXPECT_NEAR(out.usage.cost_usd, 0.00384 + 0.00465 + 0.00405 + 0.0042, 1e-12);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "lower x to 99");
  AgentOutput failed = Stream(Fixture("opencode_401.jsonl"));
  EXPECT_FALSE(failed.is_error);  // the exit status says so; the text is the reason
  EXPECT_EQ(failed.last_error, "APIError: invalid x-api-key (HTTP 401)");
}

TEST(AgentOutputTest, ALaterSmallerReportDoesNotLowerTheSpend) {
  const std::string report =
      R"({"type":"result","subtype":"success","is_error":false,"result":"DESCRIPTION: a",)"
      R"("total_cost_usd":0.5,"usage":{"input_tokens":1000,"output_tokens":100}})";
  const std::string zero =
      R"({"type":"result","subtype":"success","is_error":false,"result":"DESCRIPTION: b",)"
      R"("total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}})";
  AgentOutput out = ParseAgentOutput(report + "\n" + zero + "\n");
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.5);
  EXPECT_EQ(out.usage.input_tokens, 1000);
  EXPECT_EQ(out.usage.output_tokens, 100);
}

TEST(AgentOutputTest, ExitZeroWithAnErrorReportIsAnError) {
  AgentOutput out = ParseAgentOutput(
      R"({"type":"result","subtype":"success","is_error":true,"api_error_status":401,)"
      R"("result":"Failed to authenticate. API Error: 401 invalid x-api-key","total_cost_usd":0})");
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.error_kind, "HTTP 401");
  EXPECT_EQ(out.error_text, "Failed to authenticate. API Error: 401 invalid x-api-key");
}

// The shape Claude Code prints with --output-format json (one line).
const char* kClaudeResult =
    R"({"type":"result","subtype":"success","is_error":false,"duration_ms":61234,)"
    R"("num_turns":7,"result":"I lowered the learning rate.\nHYPOTHESIS: less noise\n)"
    R"(DESCRIPTION: lower LR from 0.04 to 0.03","session_id":"abc",)"
    R"("total_cost_usd":0.4215,"usage":{"input_tokens":120,)"
    R"("cache_creation_input_tokens":3000,"cache_read_input_tokens":50000,)"
    R"("output_tokens":2100,"service_tier":"standard"}})";

TEST(AgentOutputTest, ReadsClaudeCodeJsonAmongOtherLines) {
  std::string output = std::string("warning: something on stderr\n") + kClaudeResult + "\n";
  AgentOutput out = ParseAgentOutput(output);
  ASSERT_TRUE(out.has_usage);
  EXPECT_EQ(out.usage.input_tokens, 120 + 3000 + 50000);
  EXPECT_EQ(out.usage.output_tokens, 2100);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.4215);
  EXPECT_TRUE(out.structured);
  EXPECT_FALSE(out.is_error);
  AgentSummary s = ExtractSummary(out.final_text);
  EXPECT_EQ(s.description, "lower LR from 0.04 to 0.03");
  EXPECT_EQ(s.hypothesis, "less noise");
  EXPECT_TRUE(s.marked);
}

TEST(AgentOutputTest, ReadsAPrettyPrintedReportAndTheOlderCostField) {
  AgentOutput out = ParseAgentOutput(
      "doing things {not json\n"
      "{\n  \"type\": \"result\",\n  \"cost_usd\": 0.05,\n"
      "  \"usage\": {\"input_tokens\": 10, \"output_tokens\": 4},\n"
      "  \"result\": \"DESCRIPTION: tweak\"\n}\n");
  // The stray brace before it swallows nothing: the object is found.
  ASSERT_TRUE(out.has_usage) << out.final_text;
  EXPECT_EQ(out.usage.input_tokens, 10);
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.05);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "tweak");
}

TEST(AgentOutputTest, StreamJsonTakesTheFinalResult) {
  std::string output =
      R"({"type":"system","subtype":"init","session_id":"x"})"
      "\n"
      R"({"type":"assistant","message":{"usage":{"input_tokens":5,"output_tokens":5}}})"
      "\n" +
      std::string(kClaudeResult) + "\n";
  AgentOutput out = ParseAgentOutput(output);
  EXPECT_EQ(out.usage.output_tokens, 2100);  // not the per-message usage
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 0.4215);
}

TEST(AgentOutputTest, ClaudeErrorReportIsAnError) {
  AgentOutput out = ParseAgentOutput(
      R"({"type":"result","subtype":"error_max_turns","is_error":true,"total_cost_usd":1.5,)"
      R"("usage":{"input_tokens":1,"output_tokens":2}})");
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.error_kind, "error_max_turns");
  EXPECT_DOUBLE_EQ(out.usage.cost_usd, 1.5);  // spent all the same
}

TEST(AgentOutputTest, CodexJsonLinesAreSummedPerTurn) {
  std::string output =
      R"({"type":"thread.started","thread_id":"t"})"
      "\n"
      R"({"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":800,"output_tokens":50}})"
      "\n"
      R"({"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Done.\nDESCRIPTION: widen MLP"}})"
      "\n"
      R"({"type":"turn.completed","usage":{"input_tokens":500,"cached_input_tokens":0,"output_tokens":25}})"
      "\n";
  AgentOutput out = ParseAgentOutput(output);
  ASSERT_TRUE(out.has_usage);
  EXPECT_EQ(out.usage.input_tokens, 1500);  // cached tokens are part of input_tokens
  EXPECT_EQ(out.usage.output_tokens, 75);
  EXPECT_EQ(out.usage.cost_usd, 0);
  EXPECT_EQ(ExtractSummary(out.final_text).description, "widen MLP");
}

TEST(AgentOutputTest, PlainTextHasNoUsage) {
  AgentOutput out = ParseAgentOutput("edited train.py\nDone: raised depth to 10\n");
  EXPECT_FALSE(out.has_usage);
  EXPECT_TRUE(out.usage.empty());
  AgentSummary s = ExtractSummary(out.final_text);
  EXPECT_FALSE(s.marked);
  EXPECT_EQ(s.description, "Done: raised depth to 10");
}

TEST(AgentOutputTest, DescriptionMarkIgnoresCaseAndMarkdown) {
  EXPECT_EQ(ExtractSummary("**Description:** use RoPE base 20000\n").description,
            "use RoPE base 20000");
  EXPECT_EQ(ExtractSummary("- DESCRIPTION: `a` then\nDESCRIPTION: b\n```\n").description, "b");
  EXPECT_EQ(ExtractSummary("text\n```\n").description, "text");  // a closing fence is not it
  EXPECT_EQ(ExtractSummary("").description, "");
}

TEST(AgentOutputTest, FindJsonObjectsSkipsBracesInStringsAndJunk) {
  std::vector<std::string> found =
      FindJsonObjects("x {a} y {\"k\": \"}{\"} z {\"n\": {\"m\": 1}} {broken");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], "{\"k\": \"}{\"}");
  EXPECT_EQ(found[1], "{\"n\": {\"m\": 1}}");
}

TEST(AgentOutputTest, NegativeOrMissingNumbersCountAsZero) {
  AgentOutput out = ParseAgentOutput(
      R"({"type":"result","total_cost_usd":-3,"usage":{"input_tokens":"many","output_tokens":-5}})");
  ASSERT_TRUE(out.has_usage);
  EXPECT_TRUE(out.usage.empty());
}

}  // namespace
}  // namespace ratchet
