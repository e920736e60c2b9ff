#include "propose/search/space_config.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

constexpr const char* kHead = R"(
[loop]
seed = 42
[edit]
files = ["train.cpp"]
[run]
command = "./train"
budget = "60s"
[metric]
name = "val_bpb"
goal = "min"
[propose]
kind = "search"
)";

// Parses kHead + `tail`; returns false with the message on any error.
bool Read(const std::string& tail, SearchConfig* out, std::string* err) {
  LoopConfig loop;
  if (!ParseLoopConfig(std::string(kHead) + tail, "ratchet.toml", &loop, err)) return false;
  ConfigSection section = loop.propose_sections["search"];
  if (!ReadSearchConfig(section, loop, out, err)) return false;
  return section.Finish(err);
}

std::string ReadError(const std::string& tail) {
  SearchConfig config;
  std::string err;
  EXPECT_FALSE(Read(tail, &config, &err)) << tail;
  return err;
}

TEST(SpaceConfigTest, ReadsAFullSection) {
  SearchConfig c;
  std::string err;
  ASSERT_TRUE(Read(R"(
[propose.search]
algorithm = "tpe"
seed = 7
init = 6
constraints = ["N_EMBD % N_HEAD == 0"]

[[propose.search.param]]
name = "MATRIX_LR"
type = "float"
low = 0.005
high = 0.1
log = true
digits = 3

[[propose.search.param]]
name = "N_EMBD"
type = "int"
low = 64
high = 512
pow2 = true

[[propose.search.param]]
name = "N_HEAD"
type = "int"
low = 2
high = 8
step = 2

[[propose.search.param]]
name = "ACT"
file = "model.py"
constant = "ACTIVATION"
values = ["relu", "gelu"]
)",
                   &c, &err))
      << err;
  EXPECT_EQ(c.options.algorithm, Algorithm::kTpe);
  EXPECT_EQ(c.options.seed, 7u);
  EXPECT_EQ(c.options.init, 6);
  ASSERT_EQ(c.space.size(), 4u);
  const ParamSpec& lr = c.space.param(0);
  EXPECT_EQ(lr.file, "train.cpp");
  EXPECT_TRUE(lr.log);
  EXPECT_EQ(lr.digits, 3);
  EXPECT_DOUBLE_EQ(lr.low, 0.005);
  EXPECT_TRUE(c.space.param(1).pow2);
  EXPECT_EQ(c.space.param(2).step, 2);
  const ParamSpec& act = c.space.param(3);
  EXPECT_EQ(act.type, ParamSpec::Type::kChoice);
  EXPECT_EQ(act.file, "model.py");
  EXPECT_EQ(act.constant, "ACTIVATION");
  ASSERT_EQ(act.choices.size(), 2u);
  EXPECT_EQ(act.choices[1].text, "gelu");
  EXPECT_EQ(c.space.constraints().size(), 1u);
}

TEST(SpaceConfigTest, DefaultsAndChoiceLiterals) {
  SearchConfig c;
  std::string err;
  ASSERT_TRUE(Read(R"(
[[propose.search.param]]
name = "WIDTH"
values = [64, 96, 128]
[[propose.search.param]]
name = "DROPOUT"
values = [0.0, 0.1, 0.25]
[[propose.search.param]]
name = "USE_NORM"
values = [true, false]
)",
                   &c, &err))
      << err;
  EXPECT_EQ(c.options.algorithm, Algorithm::kAuto);
  EXPECT_EQ(c.options.seed, 42u);  // [loop] seed
  EXPECT_EQ(c.options.init, 0);
  EXPECT_EQ(c.space.param(0).file, "train.cpp");  // the single [edit] file
  EXPECT_EQ(c.space.param(0).choices[2].text, "128");
  EXPECT_EQ(c.space.param(0).choices[2].kind, Literal::Kind::kNumber);
  // Floats keep their shortest spelling, as it is what gets written.
  EXPECT_EQ(c.space.param(1).choices[1].text, "0.1");
  EXPECT_EQ(c.space.param(1).choices[0].text, "0.0");
  EXPECT_EQ(c.space.param(2).choices[0].kind, Literal::Kind::kBool);
}

TEST(SpaceConfigTest, ErrorsNameTheKeyAndLine) {
  const std::string head = "\n[[propose.search.param]]\nname = \"X\"\n";
  std::string err = ReadError(head + "type = \"double\"\n");
  EXPECT_NE(err.find("ratchet.toml:"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown type 'double'; known: float, int, choice"), std::string::npos) << err;
  err = ReadError(head + "type = \"float\"\nlow = 1\n");
  EXPECT_NE(err.find("high: is required"), std::string::npos) << err;
  err = ReadError(head + "type = \"float\"\nlow = 1\nhigh = 2\nstep = 1\n");
  EXPECT_NE(err.find("step: applies to int parameters only"), std::string::npos) << err;
  err = ReadError(head + "type = \"float\"\nlow = 2\nhigh = 1\n");
  EXPECT_NE(err.find("low must be below high"), std::string::npos) << err;
  EXPECT_NE(err.find("ratchet.toml:15"), std::string::npos) << err;  // the [[param]] line
  err = ReadError(head + "type = \"float\"\nlow = 1\nhigh = 2\nhgih = 3\n");
  EXPECT_NE(err.find("unknown key 'hgih'"), std::string::npos) << err;
  err = ReadError(head + "values = [1, [2]]\n");
  EXPECT_NE(err.find("values"), std::string::npos) << err;
  err = ReadError("\n[propose.search]\nalgorithm = \"cmaes\"\n" + head + "values = [1, 2]\n");
  EXPECT_NE(err.find("unknown algorithm 'cmaes'"), std::string::npos) << err;
  err = ReadError("\n[propose.search]\nconstraints = [\"X > Y\"]\n" + head + "values = [1, 2]\n");
  EXPECT_NE(err.find("unknown parameter 'Y'"), std::string::npos) << err;
  err = ReadError("\n[propose.search]\nseed = 1\n");
  EXPECT_NE(err.find("at least one [[propose.search.param]]"), std::string::npos) << err;
  err = ReadError(head +
                  "type = \"int\"\nlow = 1\nhigh = 9\n[[propose.search.param]]\n"
                  "name = \"X\"\nvalues = [1, 2]\n");
  EXPECT_NE(err.find("declared twice"), std::string::npos) << err;
}

TEST(SpaceConfigTest, FileIsRequiredWhenEditFilesIsAGlob) {
  LoopConfig loop;
  std::string err;
  std::string text = kHead;
  text.replace(text.find("[\"train.cpp\"]"), 13, "[\"src/*.cc\"]");
  ASSERT_TRUE(ParseLoopConfig(text + "\n[[propose.search.param]]\nname = \"X\"\nvalues = [1, 2]\n",
                              "ratchet.toml", &loop, &err))
      << err;
  SearchConfig c;
  ConfigSection section = loop.propose_sections["search"];
  EXPECT_FALSE(ReadSearchConfig(section, loop, &c, &err));
  EXPECT_NE(err.find("needs a file"), std::string::npos) << err;
}

}  // namespace
}  // namespace ratchet
