// The owned-state check (owned_state.h) through GitRepo, on a real
// repository changed with the git CLI as a step without the sandbox would.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "vcs/git_repo.h"
#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::Shell;
using testing::TempDir;
using testing::WriteText;

const int kIsolated = (testing::IsolateGitConfig(), 0);

class OwnedStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)kIsolated;
    Git("init -q -b ratchet/t");
    WriteText(dir_ / "x.txt", "1\n");
    Git("add -A");
    Git("commit -q -m one");
    first_ = Git("rev-parse HEAD");
    WriteText(dir_ / "x.txt", "2\n");
    Git("commit -q -am two");
    second_ = Git("rev-parse HEAD");
    Git("update-ref refs/ratchet/tried/2 " + second_);
    std::string err;
    ASSERT_TRUE(GitRepo::Open(dir_.path(), &repo_, &err)) << err;
    ASSERT_TRUE(repo_->WatchOwnedState("ratchet/t", &err)) << err;
  }

  std::string Git(const std::string& args) {
    testing::CmdResult r = Shell("git -C '" + dir_.path() + "' " + args);
    EXPECT_EQ(r.rc, 0) << "git " << args << ":\n" << r.out;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  std::vector<std::string> Check() {
    std::vector<std::string> changes;
    std::string err;
    EXPECT_TRUE(repo_->RestoreOwnedState(&changes, &err)) << err;
    std::sort(changes.begin(), changes.end());
    return changes;
  }

  TempDir dir_;
  std::unique_ptr<GitRepo> repo_;
  std::string first_, second_;
};

TEST_F(OwnedStateTest, NothingChangedIsNothingReported) {
  EXPECT_TRUE(Check().empty());
  // ratchet's own moves are what is expected from then on.
  std::string err;
  ASSERT_TRUE(repo_->SetRef("refs/ratchet/tried/3", first_, &err)) << err;
  ASSERT_TRUE(repo_->AdvanceBranch("ratchet/t", first_, second_, &err)) << err;
  EXPECT_TRUE(Check().empty());
  EXPECT_EQ(Git("rev-parse refs/heads/ratchet/t"), first_);
}

TEST_F(OwnedStateTest, RefsConfigHooksAndHeadArePutBack) {
  const std::string config = ReadText(dir_ / ".git/config");
  Git("update-ref -d refs/ratchet/tried/2");
  Git("update-ref refs/heads/ratchet/t " + first_);
  Git("update-ref refs/ratchet/forged " + first_);
  Git("config core.fsmonitor 'touch /tmp/pwned'");
  WriteText(dir_ / ".git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n");
  WriteText(dir_ / ".git/info/exclude", "secret.txt\n");
  Git("symbolic-ref HEAD refs/heads/other");

  std::vector<std::string> changes = Check();
  const std::vector<std::string> expected = {
      ".git/HEAD changed (put back)",
      ".git/config changed (put back)",
      ".git/hooks/post-checkout added (removed)",
      ".git/info/exclude changed (put back)",
      "refs/heads/ratchet/t moved to " + first_.substr(0, 7) + " (put back)",
      "refs/ratchet/forged added (removed)",
      "refs/ratchet/tried/2 deleted (put back)",
  };
  EXPECT_EQ(changes, expected);
  EXPECT_EQ(ReadText(dir_ / ".git/config"), config);
  EXPECT_EQ(Git("config --get core.fsmonitor || echo none"), "none");
  EXPECT_FALSE(std::filesystem::exists(dir_ / ".git/hooks/post-checkout"));
  EXPECT_EQ(Git("symbolic-ref HEAD"), "refs/heads/ratchet/t");
  EXPECT_EQ(Git("rev-parse refs/heads/ratchet/t"), second_);
  EXPECT_EQ(Git("rev-parse refs/ratchet/tried/2"), second_);
  EXPECT_EQ(Git("for-each-ref --format='%(refname)' refs/ratchet/"), "refs/ratchet/tried/2");
  EXPECT_TRUE(Check().empty()) << "all of it is back";
}

// A ref of ratchet's turned into a name for another ref (which could then
// move without touching it) is a change, put back as the commit it held.
TEST_F(OwnedStateTest, ARefMadeSymbolicIsPutBack) {
  Git("symbolic-ref refs/ratchet/tried/2 refs/heads/ratchet/t");
  EXPECT_EQ(Check(), std::vector<std::string>{"refs/ratchet/tried/2 made symbolic (put back)"});
  EXPECT_EQ(Git("rev-parse refs/ratchet/tried/2"), second_);
  EXPECT_NE(Shell("git -C '" + dir_.path() + "' symbolic-ref -q refs/ratchet/tried/2").rc, 0);
  EXPECT_TRUE(Check().empty());
}

TEST_F(OwnedStateTest, AHooksFolderTurnedIntoALinkIsPutBack) {
  Git("pack-refs --all");  // packed refs: deleted through packed-refs, put back loose
  WriteText(dir_ / ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
  std::string err;
  ASSERT_TRUE(repo_->WatchOwnedState("ratchet/t", &err)) << err;
  TempDir elsewhere;
  WriteText(elsewhere / "post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n");
  std::filesystem::remove_all(dir_ / ".git/hooks");
  std::filesystem::create_directory_symlink(elsewhere.path(), dir_ / ".git/hooks");
  Git("update-ref -d refs/ratchet/tried/2");
  std::vector<std::string> changes = Check();
  EXPECT_NE(std::find(changes.begin(), changes.end(), ".git/hooks added (removed)"), changes.end());
  EXPECT_NE(std::find(changes.begin(), changes.end(), ".git/hooks/pre-commit deleted (put back)"),
            changes.end());
  EXPECT_FALSE(std::filesystem::is_symlink(dir_ / ".git/hooks"));
  EXPECT_EQ(ReadText(dir_ / ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
  EXPECT_TRUE(std::filesystem::exists(elsewhere / "post-checkout")) << "only the link went";
  EXPECT_EQ(Git("rev-parse refs/ratchet/tried/2"), second_);
}

TEST_F(OwnedStateTest, ACommitPrunedAwayIsNamedAsLost) {
  // The tried candidate's commit gone from the object store: the ref cannot
  // be put back, and the check says so rather than pretending.
  WriteText(dir_ / "x.txt", "3\n");
  Git("commit -q -am three");
  const std::string third = Git("rev-parse HEAD");
  Git("reset -q --hard " + second_);
  std::string err;
  ASSERT_TRUE(repo_->SetRef("refs/ratchet/tried/3", third, &err)) << err;
  Git("update-ref -d refs/ratchet/tried/3");
  Git("reflog expire --expire=now --all");
  Git("gc -q --prune=now");
  std::vector<std::string> changes = Check();
  const std::string lost = "refs/ratchet/tried/3 deleted (could not be put back: commit " +
                           third.substr(0, 7) + " is gone)";
  EXPECT_EQ(changes, std::vector<std::string>{lost}) << "gc's info/refs is no change";
  EXPECT_TRUE(Check().empty()) << "said once";
}

}  // namespace
}  // namespace ratchet
