#include "propose/search/expr.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

int Resolve(const std::string& name) {
  if (name == "N_EMBD") return 0;
  if (name == "N_HEAD") return 1;
  if (name == "ACT") return 2;
  return -1;
}

bool Holds(const std::string& text, double embd, double head, const std::string& act = "gelu") {
  Expr e;
  std::string err;
  EXPECT_TRUE(Expr::Parse(text, Resolve, &e, &err)) << err;
  return e.Holds({ExprValue::Number(embd), ExprValue::Number(head), ExprValue::String(act)});
}

TEST(ExprTest, DivisibilityAndRatio) {
  EXPECT_TRUE(Holds("N_EMBD % N_HEAD == 0", 256, 8));
  EXPECT_FALSE(Holds("N_EMBD % N_HEAD == 0", 256, 6));
  EXPECT_TRUE(Holds("N_EMBD / N_HEAD >= 16", 256, 16));
  EXPECT_FALSE(Holds("N_EMBD / N_HEAD >= 16", 256, 32));
}

TEST(ExprTest, PrecedenceAndLogic) {
  EXPECT_TRUE(Holds("1 + 2 * 3 == 7", 0, 0));
  EXPECT_TRUE(Holds("(1 + 2) * 3 == 9", 0, 0));
  EXPECT_TRUE(Holds("-2 * -3 == 6 && !(1 > 2)", 0, 0));
  EXPECT_TRUE(Holds("N_HEAD > 100 || N_EMBD < 100", 64, 2));
  EXPECT_TRUE(Holds("N_HEAD > 1 and not (N_EMBD < 100) or false", 128, 2));
  EXPECT_TRUE(Holds("ACT == \"gelu\" && ACT != 'relu'", 0, 0));
  EXPECT_TRUE(Holds("max(N_EMBD, N_HEAD) == 64 && min(1, 2) == 1 && abs(-3) == 3", 64, 2));
  EXPECT_TRUE(Holds("log2(N_EMBD) == 6", 64, 2));
}

TEST(ExprTest, UndefinedIsFalse) {
  EXPECT_FALSE(Holds("N_EMBD % N_HEAD == 0", 256, 0));  // division by zero
  EXPECT_FALSE(Holds("N_EMBD / N_HEAD != 3", 256, 0));
  EXPECT_FALSE(Holds("ACT + 1 > 0", 0, 0));  // string arithmetic
  // Short-circuit guards the division.
  EXPECT_FALSE(Holds("N_HEAD > 0 && N_EMBD % N_HEAD == 0", 256, 0));
  EXPECT_TRUE(Holds("N_HEAD == 0 || N_EMBD % N_HEAD == 0", 256, 0));
}

TEST(ExprTest, ParseErrorsNameTheProblem) {
  Expr e;
  std::string err;
  EXPECT_FALSE(Expr::Parse("N_EMBD % N_HED == 0", Resolve, &e, &err));
  EXPECT_NE(err.find("unknown parameter 'N_HED'"), std::string::npos) << err;
  EXPECT_FALSE(Expr::Parse("N_EMBD % == 0", Resolve, &e, &err));
  EXPECT_NE(err.find("column"), std::string::npos) << err;
  EXPECT_FALSE(Expr::Parse("(N_EMBD > 1", Resolve, &e, &err));
  EXPECT_NE(err.find("expected ')'"), std::string::npos) << err;
  EXPECT_FALSE(Expr::Parse("N_EMBD > 1 $", Resolve, &e, &err));
  EXPECT_FALSE(Expr::Parse("sqrt(N_EMBD) > 1", Resolve, &e, &err));
  EXPECT_NE(err.find("unknown function"), std::string::npos) << err;
}

TEST(ExprTest, ListsVariables) {
  Expr e;
  std::string err;
  ASSERT_TRUE(Expr::Parse("N_EMBD % N_HEAD == 0", Resolve, &e, &err));
  EXPECT_EQ(e.Variables(), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace ratchet
