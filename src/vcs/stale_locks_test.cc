// Clearing the lock files a killed git write leaves, on real repositories.
#include "vcs/stale_locks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "vcs/git_repo.h"
#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::Shell;
using testing::TempDir;
using testing::WriteText;

const int kIsolated = (testing::IsolateGitConfig(), 0);

class StaleLocksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)kIsolated;
    ASSERT_EQ(Git("init -q -b main").rc, 0);
    WriteText(dir_ / "x.txt", "1\n");
    ASSERT_EQ(Git("add -A").rc, 0);
    ASSERT_EQ(Git("commit -q -m initial").rc, 0);
    ASSERT_EQ(Git("branch ratchet/main").rc, 0);
    std::string err;
    ASSERT_TRUE(GitRepo::Open(dir_.path(), &repo_, &err)) << err;
  }

  testing::CmdResult Git(const std::string& args) {
    return Shell("git -C '" + dir_.path() + "' " + args);
  }
  std::string GitDir() const { return dir_ / ".git"; }

  TempDir dir_;
  std::unique_ptr<GitRepo> repo_;
};

TEST_F(StaleLocksTest, FindsLocksAtTheTopAndUnderRefsOnly) {
  WriteText(GitDir() + "/index.lock", "");
  WriteText(GitDir() + "/refs/heads/ratchet/main.lock", "");
  WriteText(GitDir() + "/objects/ab/tmp.lock", "");  // not a place git locks
  WriteText(GitDir() + "/refs/heads/ratchet/main.locked", "");
  EXPECT_EQ(FindGitLocks(GitDir()), (std::vector<std::string>{
                                        GitDir() + "/index.lock",
                                        GitDir() + "/refs/heads/ratchet/main.lock"}));
}

TEST_F(StaleLocksTest, ALeftoverLockBlocksWritesUntilItIsRemoved) {
  // What a kill -9 inside a ref update leaves: an empty lock beside the ref.
  WriteText(GitDir() + "/refs/heads/ratchet/main.lock", "");
  WriteText(GitDir() + "/index.lock", "");
  std::string head, err;
  ASSERT_TRUE(repo_->Head(&head, &err)) << err;
  EXPECT_FALSE(repo_->SetRef("refs/heads/ratchet/main", head, &err));
  EXPECT_NE(err.find("lock"), std::string::npos) << err;

  std::vector<std::string> removed;
  ASSERT_TRUE(RemoveStaleGitLocks(repo_->GitDirs(), 0.05, &removed, &err)) << err;
  std::vector<std::string> expected{GitDir() + "/index.lock",
                                    GitDir() + "/refs/heads/ratchet/main.lock"};
  for (auto& path : removed) path = std::filesystem::weakly_canonical(path).string();
  for (auto& path : expected) path = std::filesystem::weakly_canonical(path).string();
  EXPECT_EQ(removed, expected);
  EXPECT_TRUE(repo_->SetRef("refs/heads/ratchet/main", head, &err)) << err;
  EXPECT_EQ(Git("update-index --refresh").rc, 0) << "the index is writable again";
  EXPECT_EQ(Git("rev-parse ratchet/main").out, head + "\n");
}

TEST_F(StaleLocksTest, ALockThatGoesAwayWhileWaitingIsLeftToItsOwner) {
  const std::string lock = GitDir() + "/HEAD.lock";
  WriteText(lock, "");
  // A live git command that finishes its write (renames the lock) mid-wait.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::filesystem::rename(lock, GitDir() + "/HEAD.written");
  });
  std::vector<std::string> removed;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  bool ok = RemoveStaleGitLocks(repo_->GitDirs(), 30, &removed, &err);
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  ASSERT_TRUE(ok) << err;
  EXPECT_TRUE(removed.empty());
  EXPECT_LT(waited, std::chrono::seconds(20)) << "returns once the locks are gone";
  EXPECT_TRUE(std::filesystem::exists(GitDir() + "/HEAD.written"));
}

TEST_F(StaleLocksTest, NoLocksNoWait) {
  std::vector<std::string> removed;
  std::string err;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(RemoveStaleGitLocks(repo_->GitDirs(), 30, &removed, &err)) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_TRUE(removed.empty());
}

}  // namespace
}  // namespace ratchet
