#include "core/config.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

const char* kGood = R"(
[loop]
tag = "night1"
seed = 7

[edit]
files = ["train.cpp", "src/*.h"]
protected = ["prepare/", "ratchet.toml"]

[run]
build = "make -s"
command = "./train"
budget = "5m"
timeout = "7m"
env = { OMP_NUM_THREADS = "2", SEED = 3 }

[metric]
name = "val_bpb"
goal = "min"
constraints = ["peak_mem_mb <= 8000"]

[[gate]]
name = "gradcheck"
command = "./gradcheck"

[[gate]]
command = "./check-output"
when = "after"
timeout = "30s"

[accept]
min_delta = 0.001
baseline_repeats = 3
confirm = 2

[stop]
max_experiments = 100
target = 0.9
wall = "8h"
patience = 20

[propose]
kind = "search"
[propose.search]
algorithm = "tpe"
)";

TEST(ConfigTest, ParsesEverySection) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(kGood, "ratchet.toml", &c, &err)) << err;
  EXPECT_EQ(c.tag, "night1");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.edit_files, (std::vector<std::string>{"train.cpp", "src/*.h"}));
  EXPECT_EQ(c.protected_files.size(), 2u);
  EXPECT_EQ(c.build, "make -s");
  EXPECT_EQ(c.command, "./train");
  EXPECT_DOUBLE_EQ(c.budget_s, 300);
  EXPECT_DOUBLE_EQ(c.timeout_s, 420);
  ASSERT_EQ(c.env.size(), 2u);
  EXPECT_EQ(c.env[1], (std::pair<std::string, std::string>{"SEED", "3"}));
  EXPECT_EQ(c.metric_name, "val_bpb");
  EXPECT_EQ(c.goal, Goal::kMin);
  ASSERT_EQ(c.constraints.size(), 1u);
  EXPECT_TRUE(c.constraints[0].Holds(8000));
  EXPECT_FALSE(c.constraints[0].Holds(8000.5));
  ASSERT_EQ(c.gates.size(), 2u);
  EXPECT_EQ(c.gates[0].name, "gradcheck");
  EXPECT_EQ(c.gates[0].when, GateConfig::When::kBefore);
  EXPECT_EQ(c.gates[1].name, "./check-output");
  EXPECT_EQ(c.gates[1].when, GateConfig::When::kAfter);
  EXPECT_DOUBLE_EQ(c.gates[1].timeout_s, 30);
  EXPECT_DOUBLE_EQ(c.min_delta, 0.001);
  EXPECT_EQ(c.baseline_repeats, 3);
  EXPECT_EQ(c.confirm, 2);
  EXPECT_EQ(c.max_experiments, 100);
  EXPECT_EQ(c.target, 0.9);
  EXPECT_EQ(c.wall_s, 8 * 3600.0);
  EXPECT_EQ(c.patience, 20);
  EXPECT_EQ(c.propose_kind, "search");
  ASSERT_EQ(c.propose_sections.count("search"), 1u);
  ConfigSection search = c.propose_sections["search"];
  EXPECT_EQ(search.String("algorithm"), "tpe");
  EXPECT_TRUE(search.Finish(&err)) << err;
}

// Parses `text` expecting failure; returns the error.
std::string ErrorOf(const std::string& text) {
  LoopConfig c;
  std::string err;
  EXPECT_FALSE(ParseLoopConfig(text, "ratchet.toml", &c, &err)) << "parsed: " << text;
  return err;
}

const char* kMinimal = R"([edit]
files = ["x.txt"]
[run]
command = "sh run.sh"
budget = "10s"
[metric]
name = "score"
goal = "max"
)";

TEST(ConfigTest, MinimalDefaults) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(kMinimal, "ratchet.toml", &c, &err)) << err;
  EXPECT_EQ(c.tag, "main");
  EXPECT_DOUBLE_EQ(c.timeout_s, 80);  // 2 * budget + 60
  EXPECT_EQ(c.propose_kind, "script");
  EXPECT_TRUE(c.Better(2, 1));
  EXPECT_FALSE(c.Better(1.05, 1, 0.1));
}

TEST(ConfigTest, SyntaxErrorNamesLineAndColumn) {
  std::string err = ErrorOf("[edit]\nfiles = [\"x\"\n");
  EXPECT_EQ(err.rfind("ratchet.toml:", 0), 0u) << err;
  EXPECT_NE(err.find("ratchet.toml:2:14: "), std::string::npos) << err;
}

TEST(ConfigTest, UnknownKeyNamesPositionAndAllowedKeys) {
  std::string err = ErrorOf(std::string(kMinimal) + "bugdet = 3\n");
  // The unknown key sits in [metric], the last table, on line 9.
  EXPECT_NE(err.find("ratchet.toml:9:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown key 'bugdet' in [metric]"), std::string::npos) << err;
  EXPECT_NE(err.find("allowed: constraints, goal, name, regex"), std::string::npos) << err;
}

TEST(ConfigTest, UnknownTopLevelTable) {
  std::string err = ErrorOf(std::string(kMinimal) + "[stopp]\nmax_experiments = 3\n");
  EXPECT_NE(err.find("unknown key 'stopp' in the top level"), std::string::npos) << err;
}

TEST(ConfigTest, SlurmExecutorAndSlotOptions) {
  LoopConfig c;
  std::string err;
  const std::string text = std::string(kMinimal) +
                           "[executor]\nkind = \"slurm\"\nsbatch = [\"--partition=gpu\"]\n"
                           "poll = \"1s\"\n"
                           "[[run.slots]]\nname = \"a\"\nCUDA_VISIBLE_DEVICES = \"0\"\n"
                           "sbatch = [\"--gres=gpu:1\"]\n";
  ASSERT_TRUE(ParseLoopConfig(text, "ratchet.toml", &c, &err)) << err;
  EXPECT_TRUE(c.executor.slurm());
  EXPECT_EQ(c.executor.sbatch, std::vector<std::string>{"--partition=gpu"});
  EXPECT_DOUBLE_EQ(c.executor.poll_s, 1);
  ASSERT_EQ(c.slots.size(), 1u);
  EXPECT_EQ(c.slots[0].sbatch, std::vector<std::string>{"--gres=gpu:1"});
  // sbatch is the job's options, not a variable of the slot.
  ASSERT_EQ(c.slots[0].env.size(), 1u);
  EXPECT_EQ(c.slots[0].env[0].first, "CUDA_VISIBLE_DEVICES");
}

TEST(ConfigTest, ExecutorKindIsChecked) {
  std::string err = ErrorOf(std::string(kMinimal) + "[executor]\nkind = \"pbs\"\n");
  EXPECT_NE(err.find("must be \"local\" or \"slurm\", not \"pbs\""), std::string::npos) << err;
  err = ErrorOf(std::string(kMinimal) + "[executor]\nsbatch = [\"-p x\"]\n");
  EXPECT_NE(err.find("sbatch and poll are for kind = \"slurm\""), std::string::npos) << err;
}

TEST(ConfigTest, NegativeBudget) {
  std::string text = kMinimal;
  text.replace(text.find("\"10s\""), 5, "\"-5s\"");
  std::string err = ErrorOf(text);
  EXPECT_NE(err.find("ratchet.toml:5:"), std::string::npos) << err;
  EXPECT_NE(err.find("[run] budget: must be a positive duration"), std::string::npos) << err;
}

TEST(ConfigTest, PruneTable) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(std::string(kMinimal) +
                                  "[prune]\nvalue = \"loss\"\nat = [0.3, 0.6]\npatience = 1\n",
                              "ratchet.toml", &c, &err))
      << err;
  EXPECT_EQ(c.prune.rule, "median") << "the table alone turns the median rule on";
  EXPECT_EQ(c.prune.at, (std::vector<double>{0.3, 0.6}));
  EXPECT_EQ(c.prune.patience, 1);
  EXPECT_EQ(c.prune.goal, c.goal);
  ASSERT_TRUE(ParseLoopConfig(kMinimal, "ratchet.toml", &c, &err)) << err;
  EXPECT_FALSE(c.prune.enabled()) << "no [prune]: off";
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[prune]\nrule = \"median\"\n").find("[prune] value: missing"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[prune]\nrule = \"asha\"\nvalue = \"loss\"\n")
                .find("must be \"median\", \"incumbent\", \"halving\" or \"off\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[prune]\nvalue = \"loss\"\nat = [0.5, 0.25]\n")
                .find("checkpoints must increase"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[prune]\nvalue = \"loss\"\nat = [1.5]\n")
                .find("between 0 and 1"),
            std::string::npos);
  std::string no_budget = kMinimal;
  no_budget.replace(no_budget.find("budget = \"10s\"\n"), 15, "");
  const std::string e = ErrorOf(no_budget + "[prune]\nvalue = \"loss\"\n");
  EXPECT_NE(e.find("needs [run] budget"), std::string::npos) << e;
}

TEST(ConfigTest, Preflight) {
  auto with = [](const std::string& line) {
    std::string text = kMinimal;
    text.replace(text.find("budget = \"10s\"\n"), 15, "budget = \"10s\"\n" + line + "\n");
    return text;
  };
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(kMinimal, "ratchet.toml", &c, &err)) << err;
  EXPECT_EQ(c.preflight_s, 0) << "off unless asked for";
  ASSERT_TRUE(ParseLoopConfig(with("preflight = \"2s\""), "ratchet.toml", &c, &err)) << err;
  EXPECT_DOUBLE_EQ(c.preflight_s, 2);
  EXPECT_DOUBLE_EQ(c.PreflightDeadline(), 2 + 70) << "its budget plus a full run's slack (80 - 10)";
  ASSERT_TRUE(ParseLoopConfig(with("preflight = 2\noverhead = \"5s\""), "ratchet.toml", &c, &err))
      << err;
  EXPECT_DOUBLE_EQ(c.PreflightDeadline(), 7) << "its budget plus the overhead";
  const std::string e = ErrorOf(with("preflight = \"10s\""));
  EXPECT_NE(e.find("[run] preflight: must be less than the budget (10s)"), std::string::npos) << e;
  EXPECT_NE(ErrorOf(with("preflight = \"soon\"")).find("not a duration"), std::string::npos);
}

TEST(ConfigTest, MissingRunCommand) {
  std::string text = kMinimal;
  text.replace(text.find("command = \"sh run.sh\"\n"), 21, "");
  std::string err = ErrorOf(text);
  EXPECT_NE(err.find("[run] command: missing"), std::string::npos) << err;
}

TEST(ConfigTest, WrongTypesAndValues) {
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[stop]\nmax_experiments = \"ten\"\n")
                .find("[stop] max_experiments: expected an integer, got a string"),
            std::string::npos);
  std::string goal = kMinimal;
  goal.replace(goal.find("\"max\""), 5, "\"down\"");
  EXPECT_NE(ErrorOf(goal).find("must be \"min\" or \"max\""), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "constraints = [\"mem ~ 3\"]\n").find("not a constraint"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kMinimal) + "[accept]\nconfirm = -1\n").find("between 0 and 100"),
            std::string::npos);
}

TEST(ConfigTest, MissingSections) {
  EXPECT_NE(ErrorOf("[run]\ncommand='x'\nbudget=1\n[metric]\nname='a'\ngoal='min'\n")
                .find("edit: missing"),
            std::string::npos);
}

TEST(ConfigTest, TimeoutShorterThanBudget) {
  std::string text = kMinimal;
  text.replace(text.find("budget = \"10s\""), 14, "budget = \"10s\"\ntimeout = \"5s\"");
  EXPECT_NE(ErrorOf(text).find("[run] timeout: must be at least the budget"), std::string::npos);
}

TEST(ConfigTest, ExtensionSectionsAreLeftToTheirOwners) {
  LoopConfig c;
  std::string err;
  ASSERT_TRUE(ParseLoopConfig(std::string(kMinimal) + "[outer]\nevery = 5\nbogus = 1\n"
                              "[propose.agent]\ncommand = ['claude', '-p']\n",
                              "ratchet.toml", &c, &err))
      << err;
  EXPECT_EQ(c.outer.Integer("every"), 5);
  EXPECT_FALSE(c.outer.Finish(&err));
  EXPECT_NE(err.find("unknown key 'bogus' in [outer]; allowed: every"), std::string::npos) << err;
  EXPECT_TRUE(c.propose_sections.at("agent").present());
}

TEST(DurationTest, Forms) {
  double s = 0;
  std::string err;
  ASSERT_TRUE(ParseDuration("90s", &s, &err));
  EXPECT_DOUBLE_EQ(s, 90);
  ASSERT_TRUE(ParseDuration("1h30m", &s, &err));
  EXPECT_DOUBLE_EQ(s, 5400);
  ASSERT_TRUE(ParseDuration("250ms", &s, &err));
  EXPECT_DOUBLE_EQ(s, 0.25);
  ASSERT_TRUE(ParseDuration("12", &s, &err));
  EXPECT_DOUBLE_EQ(s, 12);
  EXPECT_FALSE(ParseDuration("5 parsecs", &s, &err));
  EXPECT_FALSE(ParseDuration("", &s, &err));
  uint64_t b = 0;
  ASSERT_TRUE(ParseSize("64MB", &b, &err));
  EXPECT_EQ(b, 64ull << 20);
  EXPECT_FALSE(ParseSize("-1MB", &b, &err));
}

}  // namespace
}  // namespace ratchet
