// The version-control port: what the engine needs from git. The real
// implementation (src/vcs/git_repo.h) runs git; tests use a fake.
// All paths are relative to the repository root, with '/' separators.
#pragma once

#include <string>
#include <vector>

namespace ratchet {

struct FileChange {
  enum class Kind { kAdded, kModified, kDeleted };
  Kind kind;
  std::string path;
};

class Repo {
 public:
  virtual ~Repo() = default;

  /// The commit HEAD points at.
  virtual bool Head(std::string* sha, std::string* err) = 0;
  /// The branch HEAD is on ("" when detached).
  virtual bool CurrentBranch(std::string* branch, std::string* err) = 0;
  /// Paths with uncommitted changes, untracked files included, ignored files
  /// and the .ratchet/ folder excluded. Empty means clean.
  virtual bool DirtyPaths(std::vector<std::string>* paths, std::string* err) = 0;
  /// The commit a ref points at; *sha is "" if the ref does not exist.
  virtual bool ResolveRef(const std::string& ref, std::string* sha, std::string* err) = 0;
  /// Checks out `branch`, creating it at `start` first if it does not exist.
  virtual bool CheckoutBranch(const std::string& branch, const std::string& start,
                              std::string* err) = 0;
  /// How the working tree (untracked files included, ignored excluded)
  /// differs from `base`.
  virtual bool Changes(const std::string& base, std::vector<FileChange>* changes,
                       std::string* err) = 0;
  /// Snapshots the working tree as a commit whose parent is `parent`. Moves no
  /// branch. Returns the new commit in *sha.
  virtual bool CommitWorktree(const std::string& parent, const std::string& message,
                              std::string* sha, std::string* err) = 0;
  /// Points `ref` (e.g. refs/ratchet/tried/7) at `sha`.
  virtual bool SetRef(const std::string& ref, const std::string& sha, std::string* err) = 0;
  /// Moves refs/heads/<branch> from `expected_old` to `sha` (fails if it moved)
  /// and makes the index and working tree match `sha`.
  virtual bool AdvanceBranch(const std::string& branch, const std::string& sha,
                             const std::string& expected_old, std::string* err) = 0;
  /// Makes the checked-out branch, index and working tree exactly `sha`:
  /// tracked files restored, untracked (non-ignored) files removed.
  virtual bool RestoreTo(const std::string& sha, std::string* err) = 0;
  /// "N files, +A -D" between two commits.
  virtual bool DiffStat(const std::string& from, const std::string& to, std::string* stat,
                        std::string* err) = 0;
  /// The unified diff between two commits.
  virtual bool Diff(const std::string& from, const std::string& to, std::string* diff,
                    std::string* err) = 0;
};

}  // namespace ratchet
