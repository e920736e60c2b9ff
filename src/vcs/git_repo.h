// The real Repo (core/repo.h): a git repository driven in-process through
// libgit2. The engine commits and reverts once per experiment and its own
// overhead is benchmarked, so no git process is spawned per operation
// (bench/vcs/ measures the difference).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/repo.h"
#include "vcs/owned_state.h"

struct git_repository;
struct git_index;
struct git_tree;
struct git_diff;

namespace ratchet {

class GitRepo : public Repo {
 public:
  /// Opens the repository whose working tree root is `dir` (never a parent
  /// repository found by searching upwards). Fails with a message that says
  /// what to do when `dir` is not a git repository or is a bare one.
  static bool Open(const std::string& dir, std::unique_ptr<GitRepo>* repo, std::string* err);
  ~GitRepo() override;
  GitRepo(const GitRepo&) = delete;
  GitRepo& operator=(const GitRepo&) = delete;

  /// The working tree root, as given to Open.
  const std::string& dir() const { return dir_; }

  /// Where git keeps this repository's state: the .git directory and, for a
  /// linked worktree, the common one that holds the refs (once if the same).
  std::vector<std::string> GitDirs() const;

  /// Appends `pattern` (e.g. ".ratchet/") to .git/info/exclude unless a line
  /// equal to it is already there, so that plain `git status` ignores it too.
  /// Touches no tracked file. (This object ignores .ratchet/ even without it.)
  bool EnsureExcluded(const std::string& pattern, std::string* err);

  bool Head(std::string* sha, std::string* err) override;
  bool CurrentBranch(std::string* branch, std::string* err) override;
  bool DirtyPaths(std::vector<std::string>* paths, std::string* err) override;
  bool HasCommit(const std::string& sha, bool* exists, std::string* err) override;
  /// Accepts full names ("refs/ratchet/tried/7", "HEAD") and short ones ("main").
  bool ResolveRef(const std::string& ref, std::string* sha, std::string* err) override;
  /// `start` may be any revision ("" means HEAD). Uncommitted changes that the
  /// checkout would overwrite make it fail rather than be lost.
  bool CheckoutBranch(const std::string& branch, const std::string& start,
                      std::string* err) override;
  /// `ref` must start with "refs/". Overwrites an existing ref.
  bool SetRef(const std::string& ref, const std::string& sha, std::string* err) override;
  /// Compare-and-swap of refs/heads/<branch>, which must be checked out. Then,
  /// like RestoreTo, index and working tree become `sha` exactly: files the run
  /// left that are neither tracked nor ignored are removed.
  bool AdvanceBranch(const std::string& branch, const std::string& sha,
                     const std::string& expected_old, std::string* err) override;
  /// Ignored files (build outputs, .ratchet/) are left alone. When HEAD is
  /// detached, HEAD itself moves.
  bool RestoreTo(const std::string& sha, std::string* err) override;
  /// `from` "" means the empty tree (e.g. for a root commit).
  bool WatchOwnedState(const std::string& branch, std::string* err) override;
  bool RestoreOwnedState(std::vector<std::string>* changes, std::string* err) override;
  bool DiffStat(const std::string& from, const std::string& to, std::string* stat,
                std::string* err) override;
  bool Diff(const std::string& from, const std::string& to, std::string* diff,
            std::string* err) override;

  /// See core/repo.h and vcs/work_copy.h. Commits made here are authored by
  /// the repository's own user.name and user.email (.git/config only: no
  /// global or system configuration is read), else "ratchet".
  bool CheckoutCopy(const std::string& sha, const std::string& dir, std::string* err) override;
  bool ScanCopy(const std::string& dir, const std::string& base, CopyScan* scan,
                std::string* err) override;
  bool CommitScan(const CopyScan& scan, const std::string& message, std::string* sha,
                  std::string* err) override;
  bool Rebase(const std::string& base, const std::string& theirs, const std::string& ours,
              const std::string& message, std::string* sha, std::string* conflict,
              std::string* err) override;

 private:
  GitRepo(std::string dir, git_repository* repo) : dir_(std::move(dir)), repo_(repo) {}

  /// The repository index, re-read from disk if another process changed it.
  bool FreshIndex(git_index** index, std::string* err);
  /// The tree of commit `rev` ("" gives nullptr: the empty tree).
  bool TreeOf(const std::string& rev, git_tree** tree, std::string* err);
  /// The diff between the trees of two commits ("" is the empty tree).
  bool DiffTrees(const std::string& from, const std::string& to, git_diff** diff, std::string* err);
  /// Index and working tree to `sha`, removing untracked non-ignored files.
  bool ResetWorktree(const std::string& sha, std::string* err);
  /// The author of ratchet's commits (see CheckoutCopy's comment).
  void Identity(std::string* name, std::string* email);

  /// Packs loose refs into packed-refs (ratchet's tried refs pile up).
  void PackRefs();

  std::string dir_;
  OwnedState owned_;
  int refs_set_ = 0;
  git_repository* repo_;
};

}  // namespace ratchet
