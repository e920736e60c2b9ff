#include "propose/search/space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "propose/search/test_util.h"

namespace ratchet {
namespace {

using testing::Choice;
using testing::Float;
using testing::Int;
using testing::MakeSpace;

std::string CreateError(std::vector<ParamSpec> params, std::vector<std::string> constraints = {}) {
  SearchSpace s;
  std::string err;
  EXPECT_FALSE(SearchSpace::Create(std::move(params), std::move(constraints), &s, &err));
  return err;
}

TEST(SpaceTest, FloatLinearAndLogScales) {
  SearchSpace s = MakeSpace({Float("LR", 0.001, 0.1, true), Float("WD", 0, 0.2)});
  EXPECT_DOUBLE_EQ(s.ToUnit(0, 0.01), 0.5);  // the geometric middle
  EXPECT_NEAR(s.FromUnit(0, 0.5), 0.01, 1e-12);
  EXPECT_DOUBLE_EQ(s.ToUnit(1, 0.05), 0.25);
  EXPECT_DOUBLE_EQ(s.FromUnit(1, 0.25), 0.05);
  // Out of range clamps to the bounds.
  EXPECT_DOUBLE_EQ(s.FromUnit(0, 1.5), 0.1);
  EXPECT_DOUBLE_EQ(s.FromUnit(0, -1), 0.001);
  // Floats are rounded to 4 significant digits.
  EXPECT_DOUBLE_EQ(s.Snap(0, 0.0123456), 0.01235);
  EXPECT_TRUE(s.Contains({0.05, 0.2}));
  EXPECT_FALSE(s.Contains({0.2, 0.1}));
  EXPECT_FALSE(s.Contains({0.05}));
}

TEST(SpaceTest, IntStepAndPowerOfTwo) {
  SearchSpace s = MakeSpace(
      {Int("DEPTH", 2, 12, 2), Int("N_EMBD", 48, 1024, 1, true), Int("BATCH", 1, 1000, 1)});
  EXPECT_EQ(s.Levels(0), 6u);  // 2 4 6 8 10 12
  EXPECT_DOUBLE_EQ(s.Snap(0, 5.2), 6);
  EXPECT_DOUBLE_EQ(s.Snap(0, 100), 12);
  EXPECT_EQ(s.Levels(1), 5u);  // 64 128 256 512 1024
  EXPECT_DOUBLE_EQ(s.IntLevel(1, 0), 64);
  EXPECT_DOUBLE_EQ(s.Snap(1, 300), 256);
  EXPECT_DOUBLE_EQ(s.FromUnit(1, 0.5), 256);
  EXPECT_DOUBLE_EQ(s.FromUnit(1, 1), 1024);
  EXPECT_DOUBLE_EQ(s.ToUnit(1, 128), 0.25);
  EXPECT_TRUE(s.Contains({4, 512, 7}));
  EXPECT_FALSE(s.Contains({5, 512, 7}));    // off the step grid
  EXPECT_FALSE(s.Contains({4, 384, 7}));    // not a power of two
  EXPECT_FALSE(s.Contains({4, 512, 7.5}));  // not an integer
  // Every value of the grid is reachable from the unit interval.
  for (size_t k = 0; k < s.Levels(0); ++k) {
    const double v = s.IntLevel(0, k);
    EXPECT_DOUBLE_EQ(s.FromUnit(0, s.ToUnit(0, v)), v);
  }
}

TEST(SpaceTest, ChoiceValuesAndJson) {
  SearchSpace s = MakeSpace(
      {Choice("ACT", {Literal::String("relu"), Literal::String("gelu")}),
       Choice("WIDTH", {Literal::Number(64, "64"), Literal::Number(96, "96")}),
       Choice("NORM", {Literal::Bool(true), Literal::Bool(false)}), Float("LR", 0.001, 0.1, true)});
  EXPECT_EQ(s.Levels(0), 2u);
  const Point p{1, 0, 1, 0.031};
  EXPECT_EQ(s.Describe(p), "ACT=gelu WIDTH=64 NORM=false LR=0.031");
  const std::string json = s.ToJson(p);
  EXPECT_EQ(nlohmann::json::parse(json),
            nlohmann::json::parse(R"({"ACT":"gelu","WIDTH":64,"NORM":false,"LR":0.031})"));
  Point back;
  std::string err;
  ASSERT_TRUE(s.FromJson(json, {}, &back, &err)) << err;
  EXPECT_EQ(back, p);
  // Partial JSON keeps the base's other values.
  ASSERT_TRUE(s.FromJson(R"({"WIDTH": 96})", p, &back, &err)) << err;
  EXPECT_EQ(back, (Point{1, 1, 1, 0.031}));
  EXPECT_FALSE(s.FromJson(R"({"ACT": "tanh"})", p, &back, &err));
  EXPECT_NE(err.find("not one of relu, gelu"), std::string::npos) << err;
  EXPECT_FALSE(s.FromJson(R"({"LR": 0.5})", p, &back, &err));
  EXPECT_NE(err.find("outside"), std::string::npos) << err;
  EXPECT_FALSE(s.FromJson(R"({"LRR": 0.5})", p, &back, &err));
  EXPECT_NE(err.find("unknown parameter 'LRR'"), std::string::npos) << err;
  EXPECT_FALSE(s.FromJson(R"({"ACT": "relu", "WIDTH": 64, "NORM": true})", {}, &back, &err));
  EXPECT_NE(err.find("lack 'LR'"), std::string::npos) << err;
}

TEST(SpaceTest, Constraints) {
  SearchSpace s = MakeSpace({Int("N_EMBD", 64, 512, 64), Int("N_HEAD", 1, 16)},
                            {"N_EMBD % N_HEAD == 0", "N_EMBD / N_HEAD >= 16"});
  EXPECT_TRUE(s.Feasible({256, 8}));
  EXPECT_EQ(s.Violated({256, 6}), "N_EMBD % N_HEAD == 0");
  EXPECT_EQ(s.Violated({64, 8}), "N_EMBD / N_HEAD >= 16");
}

TEST(SpaceTest, ChoiceValuesInConstraints) {
  SearchSpace s = MakeSpace(
      {Choice("ACT", {Literal::String("relu"), Literal::String("gelu")}), Int("DEPTH", 1, 12)},
      {"ACT == \"gelu\" || DEPTH <= 4"});
  EXPECT_TRUE(s.Feasible({1, 12}));
  EXPECT_FALSE(s.Feasible({0, 12}));
  EXPECT_TRUE(s.Feasible({0, 4}));
}

TEST(SpaceTest, InvalidDeclarations) {
  EXPECT_NE(CreateError({}).find("no parameters"), std::string::npos);
  EXPECT_NE(CreateError({Float("LR", 0.1, 0.01)}).find("low must be below high"),
            std::string::npos);
  EXPECT_NE(CreateError({Float("LR", 0, 1, true)}).find("log scale"), std::string::npos);
  EXPECT_NE(CreateError({Int("D", 1.5, 4)}).find("integers"), std::string::npos);
  EXPECT_NE(CreateError({Int("D", 1, 4, 0)}).find("step"), std::string::npos);
  EXPECT_NE(CreateError({Int("N", 65, 127, 1, true)}).find("powers of two"), std::string::npos);
  EXPECT_NE(CreateError({Choice("A", {Literal::String("x")})}).find("at least two"),
            std::string::npos);
  EXPECT_NE(
      CreateError({Choice("A", {Literal::String("x"), Literal::String("x")})}).find("listed twice"),
      std::string::npos);
  EXPECT_NE(CreateError({Float("LR", 0, 1), Float("LR", 0, 1)}).find("declared twice"),
            std::string::npos);
  EXPECT_NE(CreateError({Float("2LR", 0, 1)}).find("not an identifier"), std::string::npos);
  EXPECT_NE(CreateError({Float("LR", 0, 1)}, {"LR > WD"}).find("unknown parameter 'WD'"),
            std::string::npos);
}

}  // namespace
}  // namespace ratchet
