#include "propose/agent_output.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

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
  EXPECT_EQ(out.error_detail, "error_max_turns");
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
