#include "vcs/workspace_fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

// SHA-256 test vectors (FIPS 180-2).
constexpr char kEmptySha[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kAbcSha[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256Hex, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), kEmptySha);
  EXPECT_EQ(Sha256Hex("abc"), kAbcSha);
}

class FsWorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteText(dir_ / "train.py", "abc");
    WriteText(dir_ / "prepare/data.bin", "");
    WriteText(dir_ / "prepare/sub/eval.py", "abc");
    WriteText(dir_ / "notes.md", "n");
    WriteText(dir_ / ".git/config", "abc");
    WriteText(dir_ / ".ratchet/ledger.db", "abc");
    WriteText(dir_ / "vendor/.git/HEAD", "abc");
  }
  TempDir dir_;
  FsWorkspace ws_{dir_.path()};
  std::string err_;
};

TEST_F(FsWorkspaceTest, HashesMatchingFilesOnly) {
  std::map<std::string, std::string> hashes;
  ASSERT_TRUE(ws_.HashFiles({"train.py", "prepare/"}, &hashes, &err_)) << err_;
  std::map<std::string, std::string> want = {
      {"prepare/data.bin", kEmptySha},
      {"prepare/sub/eval.py", std::string(kAbcSha)},
      {"train.py", std::string(kAbcSha)},
  };
  EXPECT_EQ(hashes, want);
}

TEST_F(FsWorkspaceTest, SkipsGitAndStateEvenWithStarStar) {
  std::map<std::string, std::string> hashes;
  ASSERT_TRUE(ws_.HashFiles({"**"}, &hashes, &err_)) << err_;
  std::vector<std::string> keys;
  for (const auto& [k, v] : hashes) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"notes.md", "prepare/data.bin", "prepare/sub/eval.py",
                                            "train.py"}));
}

TEST_F(FsWorkspaceTest, HashChangesWithContent) {
  std::map<std::string, std::string> before, after;
  ASSERT_TRUE(ws_.HashFiles({"train.py"}, &before, &err_)) << err_;
  WriteText(dir_ / "train.py", "abd");
  ASSERT_TRUE(ws_.HashFiles({"train.py"}, &after, &err_)) << err_;
  EXPECT_NE(before.at("train.py"), after.at("train.py"));
}

TEST_F(FsWorkspaceTest, SymlinksAreHashedByTargetNotFollowed) {
  ASSERT_EQ(::symlink("/etc", (dir_ / "outside").c_str()), 0);
  ASSERT_EQ(::symlink("train.py", (dir_ / "alias.py").c_str()), 0);
  std::map<std::string, std::string> hashes;
  ASSERT_TRUE(ws_.HashFiles({"**"}, &hashes, &err_)) << err_;
  EXPECT_EQ(hashes.at("outside"), Sha256Hex("symlink:/etc"));
  EXPECT_EQ(hashes.at("alias.py"), Sha256Hex("symlink:train.py"));
  for (const auto& [path, hash] : hashes)
    EXPECT_NE(path.rfind("outside/", 0), 0u) << "followed a link out of the root: " << path;
}

TEST_F(FsWorkspaceTest, WriteFileIsAtomicAndKeepsMode) {
  ASSERT_TRUE(ws_.WriteFile("deep/new/file.txt", "hello", &err_)) << err_;
  EXPECT_EQ(ReadText(dir_ / "deep/new/file.txt"), "hello");
  ::chmod((dir_ / "train.py").c_str(), 0755);
  ASSERT_TRUE(ws_.WriteFile("train.py", "replaced", &err_)) << err_;
  EXPECT_EQ(ReadText(dir_ / "train.py"), "replaced");
  struct stat st;
  ASSERT_EQ(::stat((dir_ / "train.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  for (const auto& e : std::filesystem::directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST_F(FsWorkspaceTest, ReadAppendExistsMakeDirs) {
  std::string content;
  ASSERT_TRUE(ws_.ReadFile("train.py", &content, &err_)) << err_;
  EXPECT_EQ(content, "abc");
  EXPECT_FALSE(ws_.ReadFile("missing.txt", &content, &err_));
  EXPECT_NE(err_.find("missing.txt"), std::string::npos);
  ASSERT_TRUE(ws_.AppendFile("logs/a.log", "one\n", &err_)) << err_;
  ASSERT_TRUE(ws_.AppendFile("logs/a.log", "two\n", &err_)) << err_;
  EXPECT_EQ(ReadText(dir_ / "logs/a.log"), "one\ntwo\n");
  EXPECT_TRUE(ws_.Exists("logs/a.log"));
  EXPECT_FALSE(ws_.Exists("logs/b.log"));
  ASSERT_TRUE(ws_.MakeDirs("x/y/z", &err_)) << err_;
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "x/y/z"));
}

TEST_F(FsWorkspaceTest, RefusesPathsOutsideTheRoot) {
  std::string content;
  EXPECT_FALSE(ws_.ReadFile("../etc/passwd", &content, &err_));
  EXPECT_NE(err_.find("leaves the loop directory"), std::string::npos) << err_;
  EXPECT_FALSE(ws_.WriteFile("/tmp/x", "y", &err_));
  EXPECT_FALSE(ws_.Exists("a/../../x"));
}

TEST(FsWorkspaceRoot, IsAbsoluteAndNormalised) {
  TempDir dir;
  FsWorkspace ws(dir.path() + "/./");
  EXPECT_EQ(ws.root(), dir.path());
}

}  // namespace
}  // namespace ratchet
