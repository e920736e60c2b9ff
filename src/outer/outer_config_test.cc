#include "outer/outer_config.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

bool Read(const std::string& toml, OuterConfig* out, std::string* err) {
  ConfigSection root;
  if (!ConfigSection::Parse(toml, "ratchet.toml", &root, err)) return false;
  ConfigSection outer = root.Extension("outer");
  return ReadOuterConfig(outer, out, err);
}

TEST(OuterConfig, DefaultsWithoutTheSection) {
  OuterConfig c;
  std::string err;
  ASSERT_TRUE(Read("", &c, &err)) << err;
  EXPECT_EQ(c.every, 5);
  EXPECT_EQ(c.mechanism_every, 10);
  EXPECT_EQ(c.mechanisms, (std::vector<std::string>{"tabu", "explore", "restart"}));
  EXPECT_EQ(c.stuck_spread, 0.25);
  EXPECT_EQ(c.min_acted, 12);
  EXPECT_FALSE(c.author);
}

TEST(OuterConfig, EveryKey) {
  OuterConfig c;
  std::string err;
  ASSERT_TRUE(Read(R"(
[outer]
every = 3
mechanism_every = 12
mechanisms = ["bandit"]
pool = ["tabu"]
stuck_after = 6
explore_steps = 4
restart_steps = 2
stuck_spread = 0.4
min_acted = 3
max_trials = 1
answer_timeout = "2s"
[outer.tabu]
tenure = 4
failure_tenure = 8
radius = 0.1
veto = false
[outer.bandit]
over = "exploration"
explorations = [0.0, 1.0]
c = 1.5
[outer.restart]
min_distance = 0.3
step = 0.1
[[outer.external]]
name = "mine"
command = "python3 'my mechanism.py'"
timeout = "1s"
[outer.author]
command = ["claude", "-p", "{prompt_file}"]
input = "file"
timeout = "5m"
max = 3
)",
                   &c, &err))
      << err;
  EXPECT_EQ(c.every, 3);
  EXPECT_EQ(c.mechanism_every, 12);
  EXPECT_EQ(c.mechanisms, std::vector<std::string>{"bandit"});
  EXPECT_EQ(c.pool, (std::vector<std::string>{"tabu", "bandit"}));  // the on ones join the pool
  EXPECT_EQ(c.schedule.stuck_after, 6);
  EXPECT_EQ(c.schedule.explore, 4);
  EXPECT_EQ(c.schedule.restart, 2);
  EXPECT_EQ(c.stuck_spread, 0.4);
  EXPECT_EQ(c.min_acted, 3);
  EXPECT_EQ(c.max_trials, 1);
  EXPECT_EQ(c.answer_timeout_s, 2);
  EXPECT_EQ(c.tabu.tenure, 4);
  EXPECT_EQ(c.tabu.failure_tenure, 8);
  EXPECT_EQ(c.tabu.radius, 0.1);
  EXPECT_FALSE(c.tabu.veto);
  EXPECT_EQ(c.bandit.over, "exploration");
  EXPECT_EQ(c.bandit.explorations, (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(c.bandit.c, 1.5);
  EXPECT_EQ(c.restart.min_distance, 0.3);
  ASSERT_EQ(c.external.size(), 1u);
  EXPECT_EQ(c.external[0].command, (std::vector<std::string>{"python3", "my mechanism.py"}));
  EXPECT_EQ(c.external[0].timeout_s, 1);
  ASSERT_TRUE(c.author);
  EXPECT_EQ(c.author->max, 3);
  EXPECT_EQ(c.author->command.input, AgentCommand::Input::kFile);
  EXPECT_EQ(c.author->command.timeout_s, 300);
}

TEST(OuterConfig, ErrorsNameTheKey) {
  OuterConfig c;
  std::string err;
  EXPECT_FALSE(Read("[outer]\nevry = 3\n", &c, &err));
  EXPECT_NE(err.find("unknown key 'evry' in [outer]"), std::string::npos) << err;
  EXPECT_FALSE(Read("[outer]\nmechanisms = [\"taboo\"]\n", &c, &err));
  EXPECT_NE(err.find("ratchet.toml:2:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown mechanism 'taboo'"), std::string::npos) << err;
  EXPECT_FALSE(Read("[outer]\nstuck_spread = 1.5\n", &c, &err));
  EXPECT_NE(err.find("stuck_spread"), std::string::npos) << err;
  EXPECT_FALSE(Read("[outer.tabu]\nradius = 2\n", &c, &err));
  EXPECT_NE(err.find("radius"), std::string::npos) << err;
  EXPECT_FALSE(Read("[outer.bandit]\nover = \"colour\"\n", &c, &err));
  EXPECT_FALSE(Read("[[outer.external]]\nname = \"tabu\"\ncommand = \"x\"\n", &c, &err));
  EXPECT_NE(err.find("built-in"), std::string::npos) << err;
  EXPECT_FALSE(Read("[[outer.external]]\nname = \"x\"\n", &c, &err));
  EXPECT_NE(err.find("command"), std::string::npos) << err;
  EXPECT_FALSE(Read("[outer.author]\ncommand = [\"a\", \"{bogus}\"]\n", &c, &err));
  EXPECT_NE(err.find("{bogus}"), std::string::npos) << err;
}

}  // namespace
}  // namespace ratchet
