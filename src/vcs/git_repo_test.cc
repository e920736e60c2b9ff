// GitRepo against real repositories made with the git CLI; every effect is
// checked with the git CLI too, so libgit2 and git must agree.
#include "vcs/git_repo.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "vcs/test_util.h"

namespace ratchet {
namespace {

using testing::ReadText;
using testing::Shell;
using testing::TempDir;
using testing::WriteText;

const int kIsolated = (testing::IsolateGitConfig(), 0);

class GitRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)kIsolated;
    Git("init -q -b main");
    WriteText(dir_ / ".gitignore", "*.log\nbuild/\n");
    WriteText(dir_ / "train.py", "lr = 0.1\nsteps = 10\n");
    WriteText(dir_ / "prepare/data.txt", "data\n");
    WriteText(dir_ / "src/deep/model.py", "layers = 2\n");
    WriteText(dir_ / "run.sh", "#!/bin/sh\necho hi\n");
    Git("add -A");
    Git("commit -q -m initial");
    base_ = Git("rev-parse HEAD");
    std::string err;
    ASSERT_TRUE(GitRepo::Open(dir_.path(), &repo_, &err)) << err;
  }

  /// Runs git in the repository; the test fails if git does.
  std::string Git(const std::string& args) {
    testing::CmdResult r = Shell("git -C '" + dir_.path() + "' " + args);
    EXPECT_EQ(r.rc, 0) << "git " << args << ":\n" << r.out;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }
  /// `git status` as the CLI sees it, .ratchet/ aside (this fixture does not
  /// write .git/info/exclude, to show that GitRepo needs no help to spare it).
  std::string Porcelain() {
    return Git("status --porcelain --untracked-files=all -- . ':(exclude).ratchet'");
  }
  bool IsExecutable(const std::string& rel) {
    struct stat st;
    return ::stat((dir_ / rel).c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
  }
  bool Exists(const std::string& rel) { return std::filesystem::exists(dir_ / rel); }

  /// A candidate on top of `base`: a working copy of it, edited by `edit`
  /// (given the copy's folder), scanned and committed.
  std::string Candidate(const std::string& base, const std::string& message,
                        const std::function<void(const std::string&)>& edit) {
    const std::string copy = copies_ / ("c" + std::to_string(++copy_count_));
    std::string sha;
    EXPECT_TRUE(repo_->CheckoutCopy(base, copy, &err_)) << err_;
    edit(copy);
    CopyScan scan;
    EXPECT_TRUE(repo_->ScanCopy(copy, base, &scan, &err_)) << err_;
    EXPECT_TRUE(repo_->CommitScan(scan, message, &sha, &err_)) << err_;
    return sha;
  }

  /// A candidate touching every kind of change.
  void MakeMixedCandidate() {
    WriteText(dir_ / "train.py", "lr = 0.2\nsteps = 10\n");  // modified
    std::filesystem::remove(dir_ / "prepare/data.txt");      // deleted
    WriteText(dir_ / "src/new/sub/extra.py", "x = 1\n");     // untracked, nested
    WriteText(dir_ / "debug.log", "ignored\n");              // ignored
    WriteText(dir_ / "build/out.o", "object\n");             // ignored directory
    WriteText(dir_ / ".ratchet/ledger.db", "state\n");       // engine state
    std::filesystem::permissions(dir_ / "run.sh", std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add);  // mode change
  }

  TempDir dir_;
  TempDir copies_;
  int copy_count_ = 0;
  std::string base_;
  std::unique_ptr<GitRepo> repo_;
  std::string err_;
};

TEST(GitRepoOpen, NotARepositorySaysWhatToDo) {
  TempDir dir;
  std::unique_ptr<GitRepo> repo;
  std::string err;
  EXPECT_FALSE(GitRepo::Open(dir.path(), &repo, &err));
  EXPECT_EQ(err,
            dir.path() + " is not a git repository (run `git init` there, or use `ratchet init`)");
  EXPECT_FALSE(GitRepo::Open(dir / "missing", &repo, &err));
  EXPECT_NE(err.find("is not a directory"), std::string::npos) << err;
}

TEST(GitRepoOpen, SubdirectoryOfARepositoryIsNotOne) {
  TempDir dir;
  ASSERT_EQ(Shell("git -C '" + dir.path() + "' init -q").rc, 0);
  std::filesystem::create_directories(dir / "my-loop");
  std::unique_ptr<GitRepo> repo;
  std::string err;
  EXPECT_FALSE(GitRepo::Open(dir / "my-loop", &repo, &err));
  EXPECT_NE(err.find("is not a git repository"), std::string::npos) << err;
}

TEST_F(GitRepoTest, HeadAndBranchAgreeWithGit) {
  std::string sha, branch;
  ASSERT_TRUE(repo_->Head(&sha, &err_)) << err_;
  EXPECT_EQ(sha, base_);
  ASSERT_TRUE(repo_->CurrentBranch(&branch, &err_)) << err_;
  EXPECT_EQ(branch, "main");
  Git("checkout -q --detach");
  ASSERT_TRUE(repo_->CurrentBranch(&branch, &err_)) << err_;
  EXPECT_EQ(branch, "");
}

TEST(GitRepoOpen, UnbornHeadIsAClearError) {
  TempDir dir;
  ASSERT_EQ(Shell("git -C '" + dir.path() + "' init -q -b main").rc, 0);
  std::unique_ptr<GitRepo> repo;
  std::string err, sha, branch;
  ASSERT_TRUE(GitRepo::Open(dir.path(), &repo, &err)) << err;
  EXPECT_FALSE(repo->Head(&sha, &err));
  EXPECT_NE(err.find("has no commit yet"), std::string::npos) << err;
  ASSERT_TRUE(repo->CurrentBranch(&branch, &err)) << err;
  EXPECT_EQ(branch, "main");
}

TEST_F(GitRepoTest, DirtyPathsListsChangesButNotIgnoredOrState) {
  std::vector<std::string> dirty;
  ASSERT_TRUE(repo_->DirtyPaths(&dirty, &err_)) << err_;
  EXPECT_TRUE(dirty.empty());
  MakeMixedCandidate();
  WriteText(dir_ / "staged.txt", "s\n");
  Git("add staged.txt");
  ASSERT_TRUE(repo_->DirtyPaths(&dirty, &err_)) << err_;
  EXPECT_EQ(dirty, (std::vector<std::string>{"prepare/data.txt", "run.sh", "src/new/sub/extra.py",
                                             "staged.txt", "train.py"}));
}

TEST_F(GitRepoTest, DiscardCycleRestoresExactlyAndKeepsTheCandidate) {
  std::string sha = Candidate(base_, "candidate 2", [](const std::string& c) {
    WriteText(c + "/train.py", "lr = 0.2\nsteps = 10\n");
  });
  // The loop directory itself was edited too (by hand, say): restoring puts
  // it back exactly.
  MakeMixedCandidate();
  ASSERT_TRUE(repo_->SetRef("refs/ratchet/tried/2", sha, &err_)) << err_;
  WriteText(dir_ / "run_output.txt", "left by the run\n");  // created after the commit
  ASSERT_TRUE(repo_->RestoreTo(base_, &err_)) << err_;

  EXPECT_EQ(Porcelain(), "");
  EXPECT_EQ(Git("rev-parse HEAD"), base_);
  EXPECT_EQ(Git("branch --show-current"), "main");
  EXPECT_EQ(ReadText(dir_ / "train.py"), "lr = 0.1\nsteps = 10\n");
  EXPECT_EQ(ReadText(dir_ / "prepare/data.txt"), "data\n") << "a deleted file comes back";
  EXPECT_FALSE(Exists("src/new/sub/extra.py"));
  EXPECT_FALSE(Exists("run_output.txt"));
  EXPECT_FALSE(IsExecutable("run.sh"));
  EXPECT_TRUE(Exists("debug.log")) << "ignored files stay";
  EXPECT_TRUE(Exists("build/out.o"));
  EXPECT_EQ(ReadText(dir_ / ".ratchet/ledger.db"), "state\n") << "the ledger must survive";
  // Nothing tried is lost: the candidate is reachable and intact.
  EXPECT_EQ(Git("rev-parse refs/ratchet/tried/2"), sha);
  EXPECT_EQ(Git("show refs/ratchet/tried/2:train.py"), "lr = 0.2\nsteps = 10");
  EXPECT_EQ(Git("fsck --no-progress --connectivity-only"), "");
}

TEST_F(GitRepoTest, KeepCycleAdvancesTheBranch) {
  std::string sha = Candidate(base_, "candidate 2", [](const std::string& c) {
    WriteText(c + "/train.py", "lr = 0.2\nsteps = 10\n");
    std::filesystem::remove(c + "/prepare/data.txt");
    std::filesystem::permissions(c + "/run.sh", std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add);
  });
  WriteText(dir_ / "run_output.txt", "left by the run\n");
  WriteText(dir_ / ".ratchet/ledger.db", "state\n");
  ASSERT_TRUE(repo_->AdvanceBranch("main", sha, base_, &err_)) << err_;
  EXPECT_EQ(Git("rev-parse main"), sha);
  EXPECT_EQ(Git("rev-parse HEAD"), sha);
  EXPECT_EQ(Porcelain(), "");
  EXPECT_EQ(ReadText(dir_ / "train.py"), "lr = 0.2\nsteps = 10\n");
  EXPECT_FALSE(Exists("prepare/data.txt"));
  EXPECT_TRUE(IsExecutable("run.sh"));
  EXPECT_FALSE(Exists("run_output.txt"));
  EXPECT_TRUE(Exists(".ratchet/ledger.db"));
  EXPECT_EQ(Git("log --format=%s main"), "candidate 2\ninitial");
}

TEST_F(GitRepoTest, AdvanceBranchFailsWhenTheBranchMoved) {
  std::string sha = Candidate(base_, "candidate", [](const std::string& c) {
    WriteText(c + "/train.py", "lr = 0.3\n");
  });
  // Someone else commits on the loop branch meanwhile.
  WriteText(dir_ / "other.txt", "x\n");
  Git("add other.txt");
  Git("commit -q -m intruder");
  const std::string moved = Git("rev-parse HEAD");
  EXPECT_FALSE(repo_->AdvanceBranch("main", sha, base_, &err_));
  EXPECT_NE(err_.find("branch main moved"), std::string::npos) << err_;
  EXPECT_EQ(Git("rev-parse main"), moved);
  EXPECT_EQ(ReadText(dir_ / "other.txt"), "x\n") << "the tree is left alone";
  EXPECT_EQ(Porcelain(), "");
}

TEST_F(GitRepoTest, AdvanceBranchNeedsTheBranchCheckedOut) {
  std::string sha = Candidate(base_, "c", [](const std::string& c) {
    WriteText(c + "/train.py", "x\n");
  });
  EXPECT_FALSE(repo_->AdvanceBranch("other", sha, base_, &err_));
  EXPECT_NE(err_.find("checked-out branch is main"), std::string::npos) << err_;
}

TEST_F(GitRepoTest, CheckoutBranchCreatesThenReuses) {
  ASSERT_TRUE(repo_->CheckoutBranch("ratchet/t1", base_, &err_)) << err_;
  EXPECT_EQ(Git("branch --show-current"), "ratchet/t1");
  EXPECT_EQ(Git("rev-parse ratchet/t1"), base_);
  // Back to main, advance main, then check out the existing branch again: it
  // must not be reset to the new start.
  ASSERT_TRUE(repo_->CheckoutBranch("main", "", &err_)) << err_;
  WriteText(dir_ / "train.py", "lr = 0.5\n");
  Git("commit -q -am more");
  ASSERT_TRUE(repo_->CheckoutBranch("ratchet/t1", "main", &err_)) << err_;
  EXPECT_EQ(Git("rev-parse HEAD"), base_);
  EXPECT_EQ(ReadText(dir_ / "train.py"), "lr = 0.1\nsteps = 10\n");
  EXPECT_EQ(Porcelain(), "");
  EXPECT_FALSE(repo_->CheckoutBranch("bad..name", "", &err_));
}

TEST_F(GitRepoTest, CheckoutBranchRefusesToLoseWork) {
  Git("checkout -q -b side");
  WriteText(dir_ / "train.py", "side\n");
  Git("commit -q -am side");
  Git("checkout -q main");
  WriteText(dir_ / "train.py", "uncommitted\n");
  EXPECT_FALSE(repo_->CheckoutBranch("side", "", &err_));
  EXPECT_EQ(ReadText(dir_ / "train.py"), "uncommitted\n");
}

TEST_F(GitRepoTest, ResolveRef) {
  std::string sha;
  ASSERT_TRUE(repo_->ResolveRef("refs/ratchet/tried/9", &sha, &err_)) << err_;
  EXPECT_EQ(sha, "");
  ASSERT_TRUE(repo_->ResolveRef("HEAD", &sha, &err_)) << err_;
  EXPECT_EQ(sha, base_);
  ASSERT_TRUE(repo_->ResolveRef("main", &sha, &err_)) << err_;
  EXPECT_EQ(sha, base_);
  ASSERT_TRUE(repo_->ResolveRef("refs/heads/main", &sha, &err_)) << err_;
  EXPECT_EQ(sha, base_);
  ASSERT_TRUE(repo_->ResolveRef("nope", &sha, &err_)) << err_;
  EXPECT_EQ(sha, "");
}

TEST_F(GitRepoTest, SetRefNeedsRefsPrefix) {
  EXPECT_FALSE(repo_->SetRef("tried/1", base_, &err_));
  EXPECT_NE(err_.find("refs/"), std::string::npos);
}

TEST_F(GitRepoTest, DiffStatAndDiffAgreeWithGit) {
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += "line " + std::to_string(i) + "\n";
  std::string stat, diff;
  std::string sha = Candidate(base_, "c", [&](const std::string& c) {
    WriteText(c + "/train.py", lines);        // 2 lines removed, 10 added
    WriteText(c + "/src/deep/model.py", "");  // 1 removed
  });
  ASSERT_TRUE(repo_->DiffStat(base_, sha, &stat, &err_)) << err_;
  EXPECT_EQ(stat, "2 files, +10 -3");
  EXPECT_EQ(Git("diff --shortstat " + base_ + " " + sha),
            " 2 files changed, 10 insertions(+), 3 deletions(-)");
  ASSERT_TRUE(repo_->Diff(base_, sha, &diff, &err_)) << err_;
  EXPECT_EQ(diff, Git("diff " + base_ + " " + sha) + "\n");
  ASSERT_TRUE(repo_->DiffStat("", base_, &stat, &err_)) << err_;
  EXPECT_EQ(stat, "5 files, +8 -0");
  sha = Candidate(base_, "c", [](const std::string& c) {
    WriteText(c + "/train.py", "lr = 0.1\nsteps = 11\n");
  });
  ASSERT_TRUE(repo_->DiffStat(base_, sha, &stat, &err_)) << err_;
  EXPECT_EQ(stat, "1 file, +1 -1");
}

TEST_F(GitRepoTest, EnsureExcludedHidesStateFromGitCli) {
  WriteText(dir_ / ".ratchet/ledger.db", "x");
  EXPECT_EQ(Git("status --porcelain"), "?? .ratchet/");
  ASSERT_TRUE(repo_->EnsureExcluded(".ratchet/", &err_)) << err_;
  ASSERT_TRUE(repo_->EnsureExcluded(".ratchet/", &err_)) << err_;
  EXPECT_EQ(Git("status --porcelain --untracked-files=all"), "");
  std::string exclude = ReadText(dir_ / ".git/info/exclude");
  size_t first = exclude.find("\n.ratchet/\n");
  ASSERT_NE(first, std::string::npos) << exclude;
  EXPECT_EQ(exclude.find("\n.ratchet/\n", first + 1), std::string::npos) << "added once";
  EXPECT_EQ(Git("diff HEAD --stat"), "") << "no tracked file touched";
}

TEST_F(GitRepoTest, ManyCyclesKeepOnlyKeptCommitsOnTheBranch) {
  std::string incumbent = base_;
  std::vector<std::string> kept_subjects = {"initial"};
  for (int i = 2; i <= 9; ++i) {
    const std::string subject = "experiment " + std::to_string(i);
    std::string sha = Candidate(incumbent, subject, [i](const std::string& c) {
      WriteText(c + "/train.py", "lr = " + std::to_string(i) + "\n");
      if (i % 3 == 0) std::filesystem::remove(c + "/src/deep/model.py");
      WriteText(c + "/scratch/" + std::to_string(i) + ".txt", "s\n");
    });
    ASSERT_TRUE(repo_->SetRef("refs/ratchet/tried/" + std::to_string(i), sha, &err_)) << err_;
    if (i % 2 == 0) {
      ASSERT_TRUE(repo_->AdvanceBranch("main", sha, incumbent, &err_)) << err_;
      incumbent = sha;
      kept_subjects.insert(kept_subjects.begin(), subject);
    } else {
      ASSERT_TRUE(repo_->RestoreTo(incumbent, &err_)) << err_;
    }
    ASSERT_EQ(Porcelain(), "") << "after experiment " << i;
    EXPECT_EQ(Git("rev-parse HEAD"), incumbent) << "after experiment " << i;
  }
  std::string want;
  for (const std::string& s : kept_subjects) want += (want.empty() ? "" : "\n") + s;
  EXPECT_EQ(Git("log --format=%s main"), want);
  EXPECT_EQ(Git("for-each-ref --format='%(refname)' refs/ratchet/tried | wc -l"), "8");
}

}  // namespace
}  // namespace ratchet
