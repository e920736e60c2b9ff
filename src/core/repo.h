// The version-control port: what the engine needs from git. The real
// implementation (src/vcs/git_repo.h) drives libgit2 in-process; tests use a
// fake. All paths are relative to the repository root, with '/' separators.
//
// Two kinds of tree: the loop directory (the user's checkout, kept at the
// loop branch's tip) and working copies: folders ratchet makes for one
// experiment, holding exactly one commit's files and no .git, in which
// proposers edit and builds and runs happen. A candidate commit is written
// from the bytes ratchet read from a working copy, never from an index or
// anything else a step could have prepared.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ratchet {

struct FileChange {
  enum class Kind { kAdded, kModified, kDeleted };
  Kind kind;
  std::string path;
  /// Not "" when the new entry is something a candidate may not hold: a
  /// symbolic link, a fifo, a socket, a device, or a file too large to read.
  /// The scope rule refuses it; CommitScan never commits it.
  std::string problem = "";
};

/// A working copy's content as ratchet read it, compared with the commit it
/// was made from. The bytes of every added or modified regular file are kept,
/// so the candidate commit holds exactly what was read and checked.
struct CopyScan {
  struct Content {
    std::string bytes;
    bool executable = false;
  };
  std::string base;                         // the commit the copy was made from
  std::vector<FileChange> changes;          // sorted by path
  std::map<std::string, Content> contents;  // added and modified regular files
};

class Repo {
 public:
  virtual ~Repo() = default;

  /// The commit HEAD points at.
  virtual bool Head(std::string* sha, std::string* err) = 0;
  /// The branch HEAD is on ("" when detached).
  virtual bool CurrentBranch(std::string* branch, std::string* err) = 0;
  /// Paths of the loop directory with uncommitted changes, untracked files
  /// included, ignored files and the .ratchet/ folder excluded. Empty: clean.
  virtual bool DirtyPaths(std::vector<std::string>* paths, std::string* err) = 0;
  /// Whether `sha` names a commit in the object store.
  virtual bool HasCommit(const std::string& sha, bool* exists, std::string* err) = 0;
  /// The commit a ref points at; *sha is "" if the ref does not exist.
  virtual bool ResolveRef(const std::string& ref, std::string* sha, std::string* err) = 0;
  /// Checks out `branch` in the loop directory, creating it at `start` first
  /// if it does not exist.
  virtual bool CheckoutBranch(const std::string& branch, const std::string& start,
                              std::string* err) = 0;
  /// Points `ref` (e.g. refs/ratchet/tried/7) at `sha`.
  virtual bool SetRef(const std::string& ref, const std::string& sha, std::string* err) = 0;
  /// Moves refs/heads/<branch> from `expected_old` to `sha` (fails if it moved)
  /// and makes the loop directory's index and tree match `sha`.
  virtual bool AdvanceBranch(const std::string& branch, const std::string& sha,
                             const std::string& expected_old, std::string* err) = 0;
  /// Makes the loop directory's checked-out branch, index and tree exactly
  /// `sha`: tracked files restored, untracked (non-ignored) files removed.
  virtual bool RestoreTo(const std::string& sha, std::string* err) = 0;
  /// Starts checking what ratchet owns in the repository after every step
  /// (see src/vcs/owned_state.h): its refs (`branch` and refs/ratchet/*),
  /// HEAD, the config, hooks and info/, recorded as they are now; ratchet's
  /// own ref moves from then on are what is expected.
  virtual bool WatchOwnedState(const std::string& branch, std::string* err) = 0;
  /// What differs from that record, each difference put back where it can
  /// be and named ("refs/ratchet/tried/3 deleted (put back)"); empty when
  /// nothing changed, or before WatchOwnedState.
  virtual bool RestoreOwnedState(std::vector<std::string>* changes, std::string* err) = 0;
  /// "N files, +A -D" between two commits.
  virtual bool DiffStat(const std::string& from, const std::string& to, std::string* stat,
                        std::string* err) = 0;
  /// The unified diff between two commits.
  virtual bool Diff(const std::string& from, const std::string& to, std::string* diff,
                    std::string* err) = 0;

  // Working copies.

  /// Writes commit `sha`'s files into `dir` (an absolute path that must not
  /// exist yet; its parent must): regular files with git's modes, symbolic
  /// links as links. Nothing else: no .git, no ignored files.
  virtual bool CheckoutCopy(const std::string& sha, const std::string& dir,
                            std::string* err) = 0;
  /// Reads everything under `dir` without following anything (lstat) and with
  /// no ignore rules (an ignored build output is a change like any other), and
  /// compares it with commit `base`. A change of the executable bit is a
  /// modification; empty folders are not entries.
  virtual bool ScanCopy(const std::string& dir, const std::string& base, CopyScan* scan,
                        std::string* err) = 0;
  /// The commit of `scan` on top of its base, written from the bytes it holds
  /// (a private in-memory index: no hooks, no filters, no configuration).
  /// Fails if a change has a problem. Moves no ref.
  virtual bool CommitScan(const CopyScan& scan, const std::string& message, std::string* sha,
                          std::string* err) = 0;
  /// Applies candidate `theirs`, made from `base`, on top of `ours` (a
  /// three-way merge of trees) as a new commit whose parent is `ours`. When it
  /// does not apply cleanly *sha is "" and *conflict names the first path.
  virtual bool Rebase(const std::string& base, const std::string& theirs, const std::string& ours,
                      const std::string& message, std::string* sha, std::string* conflict,
                      std::string* err) = 0;
};

}  // namespace ratchet
