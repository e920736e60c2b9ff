#include "propose/search/binding.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ratchet {
namespace {

ParamSpec Param(const std::string& name, ParamSpec::Type type, double low, double high,
                const std::string& file = "train.cpp") {
  ParamSpec p;
  p.name = name;
  p.file = file;
  p.type = type;
  p.low = low;
  p.high = high;
  return p;
}

SearchSpace OneParam(ParamSpec p) {
  SearchSpace s;
  std::string err;
  EXPECT_TRUE(SearchSpace::Create({std::move(p)}, {}, &s, &err)) << err;
  return s;
}

// Finds NAME in `content`, rewrites it to `value` (parameter 0 of `space`).
std::string Rewrite(const SearchSpace& space, const std::string& content, const std::string& file,
                    double value) {
  BoundLiteral lit;
  std::string err;
  const Syntax syntax = SyntaxForPath(file);
  EXPECT_TRUE(FindConstant(content, file, space.param(0).constant, syntax, &lit, &err)) << err;
  return ReplaceLiterals(content, {{lit, ValueToLiteral(space, 0, value, lit, syntax)}});
}

std::string FindError(const std::string& content, const std::string& file,
                      const std::string& name) {
  BoundLiteral lit;
  std::string err;
  EXPECT_FALSE(FindConstant(content, file, name, SyntaxForPath(file), &lit, &err));
  return err;
}

TEST(BindingTest, SyntaxFromExtension) {
  EXPECT_EQ(SyntaxForPath("src/train.cpp"), Syntax::kCpp);
  EXPECT_EQ(SyntaxForPath("model.h"), Syntax::kCpp);
  EXPECT_EQ(SyntaxForPath("kernel.cu"), Syntax::kCpp);
  EXPECT_EQ(SyntaxForPath("train.py"), Syntax::kPython);
  EXPECT_EQ(SyntaxForPath("params.env"), Syntax::kPlain);
  EXPECT_EQ(SyntaxForPath("Makefile"), Syntax::kPlain);
}

TEST(BindingTest, CppDeclarationsKeepEveryOtherByte) {
  const SearchSpace lr = OneParam(Param("MATRIX_LR", ParamSpec::Type::kFloat, 0.001, 0.1));
  const std::string src =
      "// MATRIX_LR = 0.5 in a comment is not the constant\n"
      "/* block: constexpr double MATRIX_LR = 0.7;\n   still comment */\n"
      "const char* kDoc = \"MATRIX_LR = 0.9\";\n"
      "constexpr double MATRIX_LR = 0.04;  // tuned by hand, \"quoted\"\n"
      "double Step(double g) { return MATRIX_LR * g; }\n";
  const std::string out = Rewrite(lr, src, "train.cpp", 0.031);
  std::string expected = src;
  expected.replace(expected.find("0.04;"), 4, "0.031");
  EXPECT_EQ(out, expected);

  const SearchSpace depth = OneParam(Param("DEPTH", ParamSpec::Type::kInt, 1, 32));
  EXPECT_EQ(Rewrite(depth, "static const int DEPTH = 4;\n", "m.cc", 12),
            "static const int DEPTH = 12;\n");
  EXPECT_EQ(Rewrite(depth, "inline constexpr std::size_t DEPTH{4u};\n", "m.h", 7),
            "inline constexpr std::size_t DEPTH{7u};\n");
  EXPECT_EQ(Rewrite(depth, "#define DEPTH 4 // layers\n", "m.h", 6), "#define DEPTH 6 // layers\n");
  EXPECT_EQ(Rewrite(depth, "  DEPTH = 4;\n", "m.cc", 9), "  DEPTH = 9;\n");
}

TEST(BindingTest, CppFloatKeepsSuffixAndFloatSpelling) {
  const SearchSpace x = OneParam(Param("X", ParamSpec::Type::kFloat, 1e-5, 100));
  EXPECT_EQ(Rewrite(x, "const float X = 1e-3f;", "a.cpp", 2e-4), "const float X = 0.0002f;");
  EXPECT_EQ(Rewrite(x, "const float X = 1e-3f;", "a.cpp", 3), "const float X = 3.0f;");
  EXPECT_EQ(Rewrite(x, "constexpr double X = 1;", "a.cpp", 1e-5), "constexpr double X = 1e-05;");
  EXPECT_EQ(Rewrite(x, "constexpr double X = -2.5;", "a.cpp", 10), "constexpr double X = 10.0;");
}

TEST(BindingTest, PythonAssignments) {
  const SearchSpace lr = OneParam(Param("MATRIX_LR", ParamSpec::Type::kFloat, 0.001, 0.1));
  const std::string src =
      "\"\"\"Docstring:\nMATRIX_LR = 0.5 is documented here\n\"\"\"\n"
      "MATRIX_LR = 0.04  # comment with MATRIX_LR = 1\n"
      "lr = MATRIX_LR * 2\n"
      "if MATRIX_LR == 0.04:\n    pass\n";
  std::string expected = src;
  expected.replace(expected.find("0.04  #"), 4, "0.05");
  EXPECT_EQ(Rewrite(lr, src, "train.py", 0.05), expected);
  EXPECT_EQ(Rewrite(lr, "MATRIX_LR: float = 0.04\n", "train.py", 0.002),
            "MATRIX_LR: float = 0.002\n");

  ParamSpec act = Param("ACT", ParamSpec::Type::kChoice, 0, 1, "train.py");
  act.choices = {Literal::String("relu"), Literal::String("gelu")};
  const SearchSpace a = OneParam(act);
  EXPECT_EQ(Rewrite(a, "ACT = 'relu'  # 'x'\n", "train.py", 1), "ACT = 'gelu'  # 'x'\n");
  EXPECT_EQ(Rewrite(a, "ACT = \"relu\"\n", "train.py", 1), "ACT = \"gelu\"\n");

  ParamSpec flag = Param("USE_NORM", ParamSpec::Type::kChoice, 0, 1, "train.py");
  flag.choices = {Literal::Bool(true), Literal::Bool(false)};
  const SearchSpace f = OneParam(flag);
  EXPECT_EQ(Rewrite(f, "USE_NORM = True\n", "train.py", 1), "USE_NORM = False\n");
  EXPECT_EQ(Rewrite(f, "constexpr bool USE_NORM = true;\n", "t.cc", 1),
            "constexpr bool USE_NORM = false;\n");
}

TEST(BindingTest, PlainTextFiles) {
  const SearchSpace b = OneParam(Param("BATCH", ParamSpec::Type::kInt, 1, 512, "run.env"));
  EXPECT_EQ(Rewrite(b, "# BATCH = 1\nBATCH=32\nOTHER=1\n", "run.env", 64),
            "# BATCH = 1\nBATCH=64\nOTHER=1\n");
  EXPECT_EQ(Rewrite(b, "export BATCH = 32 # per GPU\n", "run.sh", 8),
            "export BATCH = 8 # per GPU\n");
  ParamSpec opt = Param("OPT", ParamSpec::Type::kChoice, 0, 1, "cfg.txt");
  opt.choices = {Literal::String("adam"), Literal::String("muon")};
  const SearchSpace o = OneParam(opt);
  EXPECT_EQ(Rewrite(o, "OPT = adam\n", "cfg.txt", 1), "OPT = muon\n");
}

TEST(BindingTest, MissingTwiceAndNonLiteralAreErrors) {
  std::string err = FindError("constexpr double OTHER = 1.0;\n", "train.cpp", "MATRIX_LR");
  EXPECT_NE(err.find("train.cpp: constant MATRIX_LR not found"), std::string::npos) << err;
  // Inside a comment only: still missing.
  err = FindError("// constexpr double MATRIX_LR = 1.0;\n", "train.cpp", "MATRIX_LR");
  EXPECT_NE(err.find("not found"), std::string::npos) << err;
  // A longer name is another constant.
  err = FindError("constexpr double MATRIX_LR_MIN = 1.0;\n", "train.cpp", "MATRIX_LR");
  EXPECT_NE(err.find("not found"), std::string::npos) << err;

  err = FindError("DEPTH = 4\nx = 1\nDEPTH = 6\n", "train.py", "DEPTH");
  EXPECT_NE(err.find("assigned 2 times (lines 1, 3)"), std::string::npos) << err;

  err = FindError("int x;\nconstexpr int N_EMBD = 64 * N_HEAD;\n", "train.cpp", "N_EMBD");
  EXPECT_NE(err.find("train.cpp:2: N_EMBD = 64 * N_HEAD is not a plain literal"), std::string::npos)
      << err;
}

TEST(BindingTest, LiteralMustFitTheType) {
  const SearchSpace depth = OneParam(Param("DEPTH", ParamSpec::Type::kInt, 1, 32));
  const std::string file = "m.cc";
  BoundLiteral lit;
  std::string err;
  double v = 0;
  ASSERT_TRUE(FindConstant("\n\nconst int DEPTH = 4.5;", file, "DEPTH", Syntax::kCpp, &lit, &err));
  EXPECT_FALSE(LiteralToValue(depth, 0, lit, file, Syntax::kCpp, &v, &err));
  EXPECT_NE(err.find("m.cc:3: DEPTH = 4.5 does not fit type int"), std::string::npos) << err;

  ASSERT_TRUE(FindConstant("const int DEPTH = 40;", file, "DEPTH", Syntax::kCpp, &lit, &err));
  EXPECT_FALSE(LiteralToValue(depth, 0, lit, file, Syntax::kCpp, &v, &err));
  EXPECT_NE(err.find("outside the declared range"), std::string::npos) << err;

  const SearchSpace lr = OneParam(Param("LR", ParamSpec::Type::kFloat, 0.001, 0.1));
  ASSERT_TRUE(FindConstant("LR = \"fast\"\n", "t.py", "LR", Syntax::kPython, &lit, &err));
  EXPECT_FALSE(LiteralToValue(lr, 0, lit, "t.py", Syntax::kPython, &v, &err));
  EXPECT_NE(err.find("t.py:1: LR = \"fast\" does not fit type float"), std::string::npos) << err;

  ParamSpec act = Param("ACT", ParamSpec::Type::kChoice, 0, 1, "t.py");
  act.choices = {Literal::String("relu"), Literal::String("gelu")};
  const SearchSpace a = OneParam(act);
  ASSERT_TRUE(FindConstant("ACT = 'tanh'\n", "t.py", "ACT", Syntax::kPython, &lit, &err));
  EXPECT_FALSE(LiteralToValue(a, 0, lit, "t.py", Syntax::kPython, &v, &err));
  EXPECT_NE(err.find("not one of the declared values (relu, gelu)"), std::string::npos) << err;
}

class BindingFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ratchet-binding-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& content) {
    std::ofstream(dir_ / rel, std::ios::binary) << content;
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ / rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::filesystem::path dir_;
};

TEST_F(BindingFilesTest, LoadsBaselineAndWritesOnlyChangedLiterals) {
  const std::string cpp =
      "#include <cstdio>\n"
      "constexpr double MATRIX_LR = 0.04;  // lr\n"
      "static const int DEPTH = 4;\n"
      "int main() { std::printf(\"DEPTH = %d\\n\", DEPTH); }\n";
  Write("train.cpp", cpp);
  Write("opts.py", "ACT = 'relu'\n");
  ParamSpec act = Param("ACT", ParamSpec::Type::kChoice, 0, 1, "opts.py");
  act.choices = {Literal::String("relu"), Literal::String("gelu")};
  SearchSpace space;
  std::string err;
  ASSERT_TRUE(SearchSpace::Create({Param("MATRIX_LR", ParamSpec::Type::kFloat, 0.001, 0.1),
                                   Param("DEPTH", ParamSpec::Type::kInt, 1, 12), act},
                                  {}, &space, &err))
      << err;
  Binding b;
  ASSERT_TRUE(Binding::Load(space, DirectoryReader(dir_.string()), &b, &err)) << err;
  EXPECT_EQ(b.current(), (Point{0.04, 4, 0}));

  std::vector<std::string> changed;
  ASSERT_TRUE(b.Write({0.04, 6, 0}, DirectoryWriter(dir_.string()), &changed, &err)) << err;
  EXPECT_EQ(changed, std::vector<std::string>{"train.cpp"});
  std::string expected = cpp;
  expected.replace(expected.find("= 4;"), 4, "= 6;");
  EXPECT_EQ(Read("train.cpp"), expected);
  EXPECT_EQ(Read("opts.py"), "ACT = 'relu'\n");

  // Offsets are refreshed after a write, so a second write lands right.
  changed.clear();
  ASSERT_TRUE(b.Write({0.0125, 10, 1}, DirectoryWriter(dir_.string()), &changed, &err)) << err;
  EXPECT_EQ(changed.size(), 2u);
  Binding again;
  ASSERT_TRUE(Binding::Load(space, DirectoryReader(dir_.string()), &again, &err)) << err;
  EXPECT_EQ(again.current(), (Point{0.0125, 10, 1}));
  EXPECT_EQ(Read("opts.py"), "ACT = 'gelu'\n");
}

TEST_F(BindingFilesTest, MissingFileNamesTheParameter) {
  SearchSpace space;
  std::string err;
  ASSERT_TRUE(SearchSpace::Create({Param("LR", ParamSpec::Type::kFloat, 0.001, 0.1, "nope.py")}, {},
                                  &space, &err));
  Binding b;
  EXPECT_FALSE(Binding::Load(space, DirectoryReader(dir_.string()), &b, &err));
  EXPECT_NE(err.find("parameter 'LR': cannot read"), std::string::npos) << err;
  ParamSpec escape = Param("LR", ParamSpec::Type::kFloat, 0.001, 0.1, "../x.py");
  ASSERT_TRUE(SearchSpace::Create({escape}, {}, &space, &err));
  EXPECT_FALSE(Binding::Load(space, DirectoryReader(dir_.string()), &b, &err));
  EXPECT_NE(err.find("inside the loop directory"), std::string::npos) << err;
}

}  // namespace
}  // namespace ratchet
