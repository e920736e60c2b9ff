#include "propose/agent_command.h"

#include <gtest/gtest.h>

#include "propose/agent_proposer.h"

namespace ratchet {
namespace {

ConfigSection Section(const std::string& body) {
  ConfigSection root;
  std::string err;
  EXPECT_TRUE(ConfigSection::Parse("[propose.agent]\n" + body, "ratchet.toml", &root, &err)) << err;
  return root.Table("propose").Table("agent");
}

TEST(AgentCommandTest, SplitsWordsLikeAShellWithoutOne) {
  std::vector<std::string> words;
  std::string err;
  ASSERT_TRUE(SplitWords("claude -p  'a b' \"c \\\"d\\\"\" e\\ f $HOME", &words, &err));
  EXPECT_EQ(words, (std::vector<std::string>{"claude", "-p", "a b", "c \"d\"", "e f", "$HOME"}));
  EXPECT_FALSE(SplitWords("say 'unfinished", &words, &err));
  EXPECT_EQ(err, "unterminated ' quote");
}

TEST(AgentCommandTest, ExpandsPlaceholdersAndLiteralBraces) {
  std::vector<std::string> argv = ExpandArgv(
      {"aider", "--message-file", "{prompt_file}", "x{{y}}", "{model}-{experiment}", "{other}"},
      {{"prompt_file", "/l/p.md"}, {"model", "m"}, {"experiment", "3"}});
  EXPECT_EQ(argv, (std::vector<std::string>{"aider", "--message-file", "/l/p.md", "x{y}", "m-3",
                                            "{other}"}));
}

TEST(AgentCommandTest, ReadsAListAStringInputAndTimeout) {
  ConfigSection s = Section(
      "command = [\"claude\", \"-p\", \"--output-format\", \"json\"]\n"
      "input = \"file\"\ntimeout = \"2m\"\n");
  AgentCommand c;
  ReadAgentCommand(s, {"prompt_file"}, 900, &c);
  std::string err;
  ASSERT_TRUE(s.Finish(&err)) << err;
  EXPECT_EQ(c.argv.size(), 4u);
  EXPECT_EQ(c.input, AgentCommand::Input::kFile);
  EXPECT_EQ(c.timeout_s, 120);

  ConfigSection t = Section("command = \"codex exec --json -\"\n");
  AgentCommand d;
  ReadAgentCommand(t, {}, 900, &d);
  ASSERT_TRUE(t.Finish(&err)) << err;
  EXPECT_EQ(d.argv, (std::vector<std::string>{"codex", "exec", "--json", "-"}));
  EXPECT_EQ(d.input, AgentCommand::Input::kStdin);
  EXPECT_EQ(d.timeout_s, 900);
}

TEST(AgentCommandTest, ErrorsNameTheKeyAndPosition) {
  struct Case {
    const char* body;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"command = [\"x\", \"{promt}\"]\n",
            "ratchet.toml:2:11: [propose.agent] command: "
            "unknown placeholder {promt}; known: {prompt}"},
           {"command = [\"x\", \"a{b\"]\n", "'{' without '}'"},
           {"command = \"x\"\ninput = \"pipe\"\n", "input: must be \"stdin\" or \"file\""},
           {"command = \"x\"\ntimeout = \"soon\"\n", "timeout"},
           {"command = [\"x\", 3]\n", "expected a list of strings"},
           {"command = \"\"\n", "command: is empty"},
           {"input = \"stdin\"\n", "command: missing"},
       }) {
    ConfigSection s = Section(c.body);
    AgentCommand cmd;
    ReadAgentCommand(s, {"prompt"}, 900, &cmd);
    std::string err;
    EXPECT_FALSE(s.Finish(&err)) << c.body;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

TEST(AgentCommandTest, AgentSectionIsReadStrictly) {
  ConfigSection s = Section(
      "command = \"claude -p\"\nmodel = \"sonnet\"\nhistory = 5\nlog_lines = 0\nhistroy = 3\n");
  AgentConfig config;
  ReadAgentConfig(s, &config);
  EXPECT_EQ(config.model, "sonnet");
  EXPECT_EQ(config.limits.history_rows, 5);
  EXPECT_EQ(config.limits.log_lines, 0);
  std::string err;
  EXPECT_FALSE(s.Finish(&err));
  EXPECT_NE(err.find("unknown key 'histroy' in [propose.agent]"), std::string::npos) << err;

  ConfigSection bad = Section("command = \"x\"\nhistory = -1\n");
  ReadAgentConfig(bad, &config);
  EXPECT_FALSE(bad.Finish(&err));
  EXPECT_NE(err.find("history: must be between 0 and 10000"), std::string::npos) << err;
}

}  // namespace
}  // namespace ratchet
