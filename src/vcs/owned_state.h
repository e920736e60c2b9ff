// What ratchet owns in a loop's repository while a session runs, checked
// after every step: a build, gate or run that ran without the sandbox
// ([sandbox] required = false on a machine where it does not work) reaches
// .git, and must not leave a change there that outlives it. Owned:
//   - the refs ratchet moves: the loop branch and everything under
//     refs/ratchet/ (the tried candidates), expected where ratchet last put
//     them (Expect); one that moved or went is put back if its commit is
//     still in git's objects;
//   - HEAD of the loop's worktree;
//   - the files that make git run code or hide files from it: config (and
//     config.worktree), hooks/ and info/ (but info/refs and info/packs,
//     which `git gc` writes for dumb HTTP clients), expected as they were
//     at Capture (ratchet writes none of them during a session).
// CheckAndRestore puts back what differs where it can and removes what
// appeared, and names each change. Internal to src/vcs (GitRepo uses it).
#pragma once

#include <map>
#include <string>
#include <vector>

struct git_repository;

namespace ratchet {

class OwnedState {
 public:
  /// Records the owned refs and files of `repo` as they are now.
  bool Capture(git_repository* repo, const std::string& branch, std::string* err);
  bool capturing() const { return captured_; }
  /// ratchet itself pointed `ref` at `sha`: that is what is expected now.
  void Expect(const std::string& ref, const std::string& sha);
  /// ratchet itself moved HEAD: reads it again.
  void RereadHead();
  /// Compares with what is expected and undoes what differs. Each entry of
  /// *changes is one difference: "refs/ratchet/tried/3 deleted (put back)",
  /// ".git/config changed (put back)", ... Empty when nothing changed.
  bool CheckAndRestore(git_repository* repo, std::vector<std::string>* changes, std::string* err);

  struct File {
    bool symlink = false;
    std::string bytes;  // content, or the link's target
    unsigned mode = 0;
  };

 private:
  /// Where a ref points: a commit, or (made so behind ratchet's back)
  /// another ref.
  struct RefTarget {
    std::string sha;       // full hex, when direct
    std::string symbolic;  // the ref it names, when symbolic
    bool operator==(const RefTarget& o) const { return sha == o.sha && symbolic == o.symbolic; }
  };
  using Refs = std::map<std::string, RefTarget>;

  /// `path` as changes name it: relative to the worktree (".git/config")
  /// when the git folder is inside it, as it is for every loop but a linked
  /// worktree.
  std::string Shown(const std::string& path) const;
  /// The owned files as they are now: shown path ("config", "hooks/x") ->
  /// absolute path and content. Folders are implied by their files.
  bool ScanFiles(std::map<std::string, std::pair<std::string, File>>* out, std::string* err) const;
  bool ScanRefs(git_repository* repo, Refs* out, std::string* err) const;

  bool captured_ = false;
  std::string git_dir_, common_dir_, workdir_;  // with a trailing '/'
  std::string branch_ref_;                      // refs/heads/<branch>
  Refs refs_;                                   // expected
  std::map<std::string, std::pair<std::string, File>> files_;
};

}  // namespace ratchet
