// Working copies against real repositories: what CheckoutCopy writes, what
// ScanCopy sees, and that CommitScan commits exactly the bytes it read, with
// the git CLI as the judge. Includes the tricks a hostile step could play on
// git's own machinery (a forged index, a global ignore rule), which must
// change nothing here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

class WorkCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)kIsolated;
    Git("init -q -b main");
    WriteText(loop_ / ".gitignore", "build/\n*.log\n");
    WriteText(loop_ / "train.py", "lr = 0.1\n");
    WriteText(loop_ / "prepare/data.txt", "data\n");
    WriteText(loop_ / "run.sh", "#!/bin/sh\necho hi\n");
    ::chmod((loop_ / "run.sh").c_str(), 0755);
    ASSERT_EQ(::symlink("train.py", (loop_ / "link.py").c_str()), 0);
    Git("add -A");
    Git("commit -q -m initial");
    base_ = Git("rev-parse HEAD");
    std::string err;
    ASSERT_TRUE(GitRepo::Open(loop_.path(), &repo_, &err)) << err;
    copy_ = copies_ / "1";
    ASSERT_TRUE(repo_->CheckoutCopy(base_, copy_, &err_)) << err_;
  }

  std::string Git(const std::string& args) {
    testing::CmdResult r = Shell("git -C '" + loop_.path() + "' " + args);
    EXPECT_EQ(r.rc, 0) << "git " << args << ":\n" << r.out;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  CopyScan Scan() {
    CopyScan scan;
    EXPECT_TRUE(repo_->ScanCopy(copy_, base_, &scan, &err_)) << err_;
    return scan;
  }

  // "A path", "M path", "D path", and " (problem)" where there is one.
  static std::string Describe(const CopyScan& scan) {
    std::string out;
    for (const FileChange& c : scan.changes) {
      const char* k = c.kind == FileChange::Kind::kAdded      ? "A "
                      : c.kind == FileChange::Kind::kDeleted ? "D "
                                                             : "M ";
      out += k + c.path + (c.problem.empty() ? "" : " (" + c.problem + ")") + "\n";
    }
    return out;
  }

  TempDir loop_;
  TempDir copies_;
  std::string copy_;
  std::string base_;
  std::unique_ptr<GitRepo> repo_;
  std::string err_;
};

TEST_F(WorkCopyTest, CheckoutWritesExactlyTheCommit) {
  EXPECT_EQ(ReadText(copy_ + "/train.py"), "lr = 0.1\n");
  EXPECT_EQ(ReadText(copy_ + "/prepare/data.txt"), "data\n");
  struct stat st;
  ASSERT_EQ(::stat((copy_ + "/run.sh").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  ASSERT_EQ(::lstat((copy_ + "/link.py").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_FALSE(std::filesystem::exists(copy_ + "/.git")) << "a working copy has no repository";
  EXPECT_EQ(Describe(Scan()), "") << "a fresh copy equals its commit";
  EXPECT_FALSE(repo_->CheckoutCopy(base_, copy_, &err_)) << "the folder must not exist yet";
}

TEST_F(WorkCopyTest, ScanSeesEveryKindOfChangeIgnoredFilesIncluded) {
  WriteText(copy_ + "/train.py", "lr = 0.2\n");
  std::filesystem::remove(copy_ + "/prepare/data.txt");
  WriteText(copy_ + "/build/train", "planted binary\n");  // ignored by .gitignore: still seen
  WriteText(copy_ + "/new/deep/file.txt", "x\n");
  ::chmod((copy_ + "/run.sh").c_str(), 0644);
  ASSERT_EQ(::mkfifo((copy_ + "/pipe").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/etc/passwd", (copy_ + "/evil.py").c_str()), 0);
  std::filesystem::create_directories(copy_ + "/empty/dir");
  EXPECT_EQ(Describe(Scan()),
            "A build/train\n"
            "A evil.py (is a symbolic link (to /etc/passwd))\n"
            "A new/deep/file.txt\n"
            "A pipe (is a fifo)\n"
            "D prepare/data.txt\n"
            "M run.sh\n"
            "M train.py\n");
}

TEST_F(WorkCopyTest, AFileReplacedByALinkIsAProblem) {
  std::filesystem::remove(copy_ + "/train.py");
  ASSERT_EQ(::symlink("/work/somewhere/else.py", (copy_ + "/train.py").c_str()), 0);
  EXPECT_EQ(Describe(Scan()), "M train.py (is a symbolic link (to /work/somewhere/else.py))\n");
  std::string sha;
  EXPECT_FALSE(repo_->CommitScan(Scan(), "c", &sha, &err_));
  EXPECT_NE(err_.find("cannot commit train.py"), std::string::npos) << err_;
}

TEST_F(WorkCopyTest, CommitHoldsTheBytesTheScanRead) {
  WriteText(copy_ + "/train.py", "lr = 0.3\n");
  WriteText(copy_ + "/extra.txt", "new\n");
  std::filesystem::remove(copy_ + "/prepare/data.txt");
  ::chmod((copy_ + "/run.sh").c_str(), 0644);
  CopyScan scan = Scan();
  // What is on disk after the scan does not matter: the commit is the scan.
  WriteText(copy_ + "/train.py", "lr = 999  # changed after the check\n");
  std::string sha;
  ASSERT_TRUE(repo_->CommitScan(scan, "candidate 2", &sha, &err_)) << err_;
  EXPECT_EQ(Git("rev-parse " + sha + "^"), base_);
  EXPECT_EQ(Git("log -1 --format=%s " + sha), "candidate 2");
  EXPECT_EQ(Git("show " + sha + ":train.py"), "lr = 0.3");
  EXPECT_EQ(Git("show " + sha + ":extra.txt"), "new");
  EXPECT_EQ(Git("ls-tree --name-only -r " + sha),
            ".gitignore\nextra.txt\nlink.py\nrun.sh\ntrain.py");
  EXPECT_EQ(Git("ls-tree " + sha + " run.sh").substr(0, 6), "100644");
  EXPECT_EQ(Git("ls-tree " + sha + " link.py").substr(0, 6), "120000") << "the link is kept";
  EXPECT_EQ(Git("rev-parse HEAD"), base_) << "no branch moves";
  EXPECT_EQ(Git("fsck --no-progress --no-dangling"), "");
}

TEST_F(WorkCopyTest, CommitAuthorIsTheRepositorysUserElseRatchet) {
  WriteText(copy_ + "/train.py", "lr = 0.4\n");
  std::string sha;
  ASSERT_TRUE(repo_->CommitScan(Scan(), "no identity", &sha, &err_)) << err_;
  EXPECT_EQ(Git("log -1 --format='%an <%ae>' " + sha), "ratchet <ratchet@localhost>");
  Git("config user.name 'Ada Lovelace'");
  Git("config user.email ada@example.com");
  ASSERT_TRUE(repo_->CommitScan(Scan(), "with identity", &sha, &err_)) << err_;
  EXPECT_EQ(Git("log -1 --format='%an <%ae>' " + sha), "Ada Lovelace <ada@example.com>");
}

TEST_F(WorkCopyTest, AForgedIndexAndAGlobalIgnoreRuleChangeNothing) {
  // A hostile step stages a benign blob under train.py's name in the loop's
  // index and writes a global ignore rule; the candidate is what the copy holds.
  WriteText(loop_ / "train.py", "benign\n");
  Git("add train.py");
  Git("checkout -- .");  // index says "benign", the file says the original
  const std::string home = copies_ / "home";
  WriteText(home + "/.gitconfig", "[core]\n\texcludesFile = " + home + "/ignore\n");
  WriteText(home + "/ignore", "hidden.txt\n");
  const std::string old_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("HOME", home.c_str(), 1);
  std::unique_ptr<GitRepo> reopened;
  bool opened = GitRepo::Open(loop_.path(), &reopened, &err_);
  setenv("HOME", old_home.c_str(), 1);
  ASSERT_TRUE(opened) << err_;
  WriteText(copy_ + "/train.py", "hostile\n");
  WriteText(copy_ + "/hidden.txt", "planted\n");
  CopyScan scan;
  ASSERT_TRUE(reopened->ScanCopy(copy_, base_, &scan, &err_)) << err_;
  EXPECT_EQ(Describe(scan), "A hidden.txt\nM train.py\n");
  std::string sha;
  ASSERT_TRUE(reopened->CommitScan(scan, "c", &sha, &err_)) << err_;
  EXPECT_EQ(Git("show " + sha + ":train.py"), "hostile") << "the commit is what will run";
  EXPECT_EQ(Git("show " + sha + ":hidden.txt"), "planted");
}

TEST_F(WorkCopyTest, RebaseAppliesACandidateToAMovedIncumbent) {
  // The incumbent moved (another worker's keep changed run.sh); this
  // candidate, made from the old one, changed train.py.
  WriteText(copy_ + "/train.py", "lr = 0.5\n");
  std::string theirs;
  ASSERT_TRUE(repo_->CommitScan(Scan(), "candidate", &theirs, &err_)) << err_;
  const std::string other = copies_ / "2";
  ASSERT_TRUE(repo_->CheckoutCopy(base_, other, &err_)) << err_;
  WriteText(other + "/run.sh", "#!/bin/sh\necho faster\n");
  CopyScan other_scan;
  ASSERT_TRUE(repo_->ScanCopy(other, base_, &other_scan, &err_)) << err_;
  std::string ours;
  ASSERT_TRUE(repo_->CommitScan(other_scan, "other keep", &ours, &err_)) << err_;

  std::string merged, conflict;
  ASSERT_TRUE(repo_->Rebase(base_, theirs, ours, "rebased", &merged, &conflict, &err_)) << err_;
  EXPECT_EQ(conflict, "");
  EXPECT_EQ(Git("rev-parse " + merged + "^"), ours);
  EXPECT_EQ(Git("show " + merged + ":train.py"), "lr = 0.5");
  EXPECT_EQ(Git("show " + merged + ":run.sh"), "#!/bin/sh\necho faster");

  // A second candidate from the old incumbent that touched run.sh too conflicts.
  const std::string third = copies_ / "3";
  ASSERT_TRUE(repo_->CheckoutCopy(base_, third, &err_)) << err_;
  WriteText(third + "/run.sh", "#!/bin/sh\necho slower\n");
  CopyScan third_scan;
  ASSERT_TRUE(repo_->ScanCopy(third, base_, &third_scan, &err_)) << err_;
  std::string clash;
  ASSERT_TRUE(repo_->CommitScan(third_scan, "clash", &clash, &err_)) << err_;
  ASSERT_TRUE(repo_->Rebase(base_, clash, ours, "rebased", &merged, &conflict, &err_)) << err_;
  EXPECT_EQ(merged, "");
  EXPECT_EQ(conflict, "run.sh");
}

}  // namespace
}  // namespace ratchet
