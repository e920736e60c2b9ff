#include "vcs/finalize.h"

#include <gtest/gtest.h>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::Shell;
using testing::TempDir;
using testing::WriteText;

class FinalizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::IsolateGitConfig();
    std::string lines;
    for (int i = 1; i <= 20; ++i) lines += "line " + std::to_string(i) + "\n";
    WriteText(dir / "a.txt", lines);
    Git("init -q -b main && git add -A && git commit -qm base");
    commits.push_back(Head());
  }
  void Git(const std::string& args) {
    testing::CmdResult r = Shell("cd " + dir.path() + " && git " + args);
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  std::string Head() { return Trim(Shell("git -C " + dir.path() + " rev-parse HEAD").out); }
  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  // Replaces line `n` of a.txt and commits: one "keep".
  void EditLine(int n, const std::string& text) {
    std::string content = ReadText(dir / "a.txt");
    std::string out;
    int i = 0;
    size_t start = 0;
    while (start < content.size()) {
      size_t end = content.find('\n', start);
      ++i;
      out += (i == n ? text : content.substr(start, end - start)) + "\n";
      start = end + 1;
    }
    WriteText(dir / "a.txt", out);
    Keep("edit line " + std::to_string(n));
  }
  void Keep(const std::string& message) {
    Git("add -A && git commit -qm '" + message + "'");
    commits.push_back(Head());
  }

  TempDir dir;
  std::vector<std::string> commits;
};

TEST(TouchesSameLinesTest, NearLinesInTheSameFile) {
  std::vector<FileTouch> a = {{"f", false, {{5, 1}}, {{5, 1}}}};
  EXPECT_TRUE(TouchesSameLines(a, {{"f", false, {{7, 1}}, {{7, 1}}}}, 3));
  EXPECT_FALSE(TouchesSameLines(a, {{"f", false, {{12, 1}}, {{12, 1}}}}, 3));
  EXPECT_FALSE(TouchesSameLines(a, {{"g", false, {{5, 1}}, {{5, 1}}}}, 3));
  EXPECT_TRUE(TouchesSameLines(a, {{"f", true, {}, {}}}, 3));
  // An insertion right after the line changed before (count 0: after line 5)
  // touches it; one a line further down does not, with no lines of slack.
  EXPECT_TRUE(TouchesSameLines(a, {{"f", false, {{5, 0}}, {{6, 2}}}}, 0));
  EXPECT_FALSE(TouchesSameLines(a, {{"f", false, {{6, 0}}, {{7, 2}}}}, 0));
}

TEST_F(FinalizeTest, GroupsKeepsThatTouchTheSameLines) {
  EditLine(2, "two");       // 1
  EditLine(3, "three");     // 2: next to line 2: the same improvement
  EditLine(15, "fifteen");  // 3: elsewhere
  WriteText(dir / "b.txt", "new file\n");
  Keep("add b");            // 4: a new file
  WriteText(dir / "b.txt", "new file, changed\n");
  Keep("change b");         // 5: the file 4 added
  EditLine(3, "THREE");     // 6: line 3 again, but after other keeps: a new group
  std::unique_ptr<Finalizer> f;
  std::string err;
  ASSERT_TRUE(Finalizer::Open(dir.path(), &f, &err)) << err;
  std::vector<std::vector<int>> groups;
  ASSERT_TRUE(f->Group(commits, 3, &groups, &err)) << err;
  EXPECT_EQ(groups, (std::vector<std::vector<int>>{{1, 2}, {3}, {4, 5}, {6}}));

  std::vector<FileTouch> t;
  ASSERT_TRUE(f->Touches(commits[2], commits[3], &t, &err)) << err;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].path, "a.txt");
  ASSERT_EQ(t[0].before.size(), 1u);
  EXPECT_EQ(t[0].before[0].start, 15);
  EXPECT_EQ(t[0].before[0].count, 1);
}

TEST_F(FinalizeTest, WritesASeriesEndingOnTheBestTree) {
  EditLine(2, "two");
  EditLine(15, "fifteen");
  const std::string head = Head();
  std::unique_ptr<Finalizer> f;
  std::string err;
  ASSERT_TRUE(Finalizer::Open(dir.path(), &f, &err)) << err;
  std::vector<std::string> shas;
  ASSERT_TRUE(f->Write(commits[0], "review",
                       {{commits[1], "first\n\nbody one\n"}, {commits[2], "second\n"}}, &shas, &err))
      << err;
  ASSERT_EQ(shas.size(), 2u);
  auto tree = [&](const std::string& rev) {
    return Trim(Shell("git -C " + dir.path() + " rev-parse " + rev + "^{tree}").out);
  };
  EXPECT_EQ(tree("review"), tree(commits[2]));
  EXPECT_EQ(tree("review~1"), tree(commits[1]));
  EXPECT_EQ(Trim(Shell("git -C " + dir.path() + " rev-parse review~2").out), commits[0]);
  EXPECT_EQ(Trim(Shell("git -C " + dir.path() + " log -1 --format=%B review~1").out),
            "first\n\nbody one");
  EXPECT_EQ(Head(), head) << "HEAD does not move";
  EXPECT_EQ(Shell("git -C " + dir.path() + " status --porcelain").out, "");
  // A branch that exists is never overwritten.
  EXPECT_FALSE(f->Write(commits[0], "review", {{commits[1], "x"}}, &shas, &err));
  EXPECT_NE(err.find("branch review exists already"), std::string::npos) << err;
  EXPECT_FALSE(f->Write(commits[0], "bad..name", {{commits[1], "x"}}, &shas, &err));
}

}  // namespace
}  // namespace ratchet
