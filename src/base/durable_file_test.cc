#include "base/durable_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

namespace ratchet {
namespace {

namespace fs = std::filesystem;

class ReplaceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ratchet-durable-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  unsigned Mode(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::lstat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  // Only the named entries are in the directory: no temporary file is left.
  std::vector<std::string> Entries() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(ReplaceFileTest, CreatesANewFileWithTheUmasksMode) {
  const mode_t mask = ::umask(022);
  std::string err;
  ASSERT_TRUE(ReplaceFile(dir_ + "/a.txt", "hello\n", &err)) << err;
  ::umask(mask);
  EXPECT_EQ(Read(dir_ + "/a.txt"), "hello\n");
  EXPECT_EQ(Mode(dir_ + "/a.txt"), 0644u);
  EXPECT_EQ(Entries(), std::vector<std::string>{"a.txt"});
}

TEST_F(ReplaceFileTest, KeepsTheModeOfTheFileItReplaces) {
  const std::string path = dir_ + "/run.sh";
  std::ofstream(path) << "old";
  ::chmod(path.c_str(), 0750);
  std::string err;
  ASSERT_TRUE(ReplaceFile(path, "new", &err)) << err;
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(Mode(path), 0750u);
}

TEST_F(ReplaceFileTest, AnExplicitModeWins) {
  const std::string path = dir_ + "/key";
  std::ofstream(path) << "old";
  ::chmod(path.c_str(), 0644);
  std::string err;
  ReplaceOptions options;
  options.mode = 0600u;
  ASSERT_TRUE(ReplaceFile(path, "", &err, options)) << err;
  EXPECT_EQ(Read(path), "");
  EXPECT_EQ(Mode(path), 0600u);
}

TEST_F(ReplaceFileTest, ReplacesASymbolicLinkWithoutFollowingIt) {
  const std::string target = dir_ + "/target";
  std::ofstream(target) << "untouched";
  fs::create_symlink(target, dir_ + "/link");
  std::string err;
  ReplaceOptions options;
  options.durable = false;
  ASSERT_TRUE(ReplaceFile(dir_ + "/link", "own file", &err, options)) << err;
  EXPECT_FALSE(fs::is_symlink(dir_ + "/link"));
  EXPECT_EQ(Read(dir_ + "/link"), "own file");
  EXPECT_EQ(Read(target), "untouched");
}

TEST_F(ReplaceFileTest, AMissingDirectoryFailsAndCreatesNothing) {
  std::string err;
  EXPECT_FALSE(ReplaceFile(dir_ + "/no/such/a.txt", "x", &err));
  EXPECT_NE(err.find(dir_ + "/no/such/a.txt"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ + "/no"));
}

TEST_F(ReplaceFileTest, AFailedRenameLeavesThePathAndNoTemporaryFile) {
  // A non-empty directory cannot be replaced by a file.
  fs::create_directories(dir_ + "/busy/inner");
  std::string err;
  EXPECT_FALSE(ReplaceFile(dir_ + "/busy", "x", &err));
  EXPECT_NE(err.find("cannot replace"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_directory(dir_ + "/busy/inner"));
  EXPECT_EQ(Entries(), std::vector<std::string>{"busy"});
}

TEST_F(ReplaceFileTest, ARelativePathIsReplacedInItsOwnDirectory) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  std::string err;
  const bool ok = ReplaceFile("plain.txt", "here", &err);
  fs::current_path(before);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(Read(dir_ + "/plain.txt"), "here");
}

}  // namespace
}  // namespace ratchet
