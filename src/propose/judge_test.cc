#include "propose/judge.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

const char* kBase = R"(
[edit]
files = ["doc.md"]
[run]
command = "python3 judge.py"
budget = "1m"
timeout = "5m"
[metric]
name = "min_score"
goal = "max"
[propose]
kind = "agent"
)";

bool Apply(const std::string& extra, LoopConfig* config, std::string* err) {
  if (!ParseLoopConfig(std::string(kBase) + extra, "ratchet.toml", config, err)) return false;
  return ApplyJudge(config, err);
}

std::string Env(const LoopConfig& c, const std::string& key) {
  for (const auto& [k, v] : c.env)
    if (k == key) return v;
  return "<unset>";
}

TEST(JudgeTest, ADifferentModelIsAccepted) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(Apply(R"(
[propose.agent]
command = ["claude", "-p", "--model", "{model}"]
model = "sonnet"
[judge]
command = ["claude", "-p", "--model", "{model}", "--output-format", "json"]
model = "opus"
timeout = "2m"
)",
                    &c, &err))
      << err;
  EXPECT_EQ(Env(c, "RATCHET_JUDGE"), "claude -p --model opus --output-format json");
  EXPECT_EQ(Env(c, "RATCHET_JUDGE_MODEL"), "opus");
  EXPECT_EQ(Env(c, "RATCHET_JUDGE_TIMEOUT"), "120");
}

TEST(JudgeTest, TheWritersModelIsRefused) {
  LoopConfig c;
  std::string err;
  EXPECT_FALSE(Apply(R"(
[propose.agent]
command = ["claude", "-p", "--model", "{model}"]
model = "sonnet"
[judge]
command = ["claude", "-p", "--output-format", "json", "--model=sonnet"]
)",
                     &c, &err));
  EXPECT_NE(err.find("ratchet.toml:17:1: [judge] uses the writer's model (sonnet): a writer must "
                     "not grade its own work"),
            std::string::npos)
      << err;
}

TEST(JudgeTest, TheWritersCommandIsRefused) {
  LoopConfig c;
  std::string err;
  EXPECT_FALSE(Apply(R"(
[propose.agent]
command = "sh writer.sh"
[judge]
command = ["sh", "writer.sh"]
)",
                     &c, &err));
  EXPECT_NE(err.find("[judge] command is the writer's own command (sh writer.sh)"),
            std::string::npos)
      << err;
  // A script proposer is a writer too.
  EXPECT_FALSE(Apply(R"(
[propose]
kind = "script"
[propose.script]
command = "python3 rewrite.py --model small"
[judge]
command = "python3 grade.py -m small"
)",
                     &c, &err));
}

TEST(JudgeTest, NoJudgeNoChangeAndErrors) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(Apply("[propose.agent]\ncommand = \"claude -p\"\n", &c, &err)) << err;
  EXPECT_EQ(Env(c, "RATCHET_JUDGE"), "<unset>");
  EXPECT_FALSE(Apply("[propose.agent]\ncommand = \"claude -p\"\n[judge]\nmodel = \"opus\"\n", &c,
                     &err));
  EXPECT_NE(err.find("[judge] command: missing"), std::string::npos) << err;
  EXPECT_FALSE(Apply("[propose.agent]\ncommand = \"claude -p\"\n[judge]\ncommand = \"x\"\nmodle = 1\n",
                     &c, &err));
  EXPECT_NE(err.find("unknown key 'modle'"), std::string::npos) << err;
}

TEST(JudgeTest, ShellQuoting) {
  EXPECT_EQ(ShellQuoteWords({"sh", "-c", "echo 'hi' $X", ""}),
            "sh -c 'echo '\\''hi'\\'' $X' ''");
  EXPECT_EQ(ModelInArgv({"codex", "exec", "-m", "o3"}), "o3");
  EXPECT_EQ(ModelInArgv({"claude", "-p"}), "");
}

}  // namespace
}  // namespace ratchet
