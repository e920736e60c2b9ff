// `ratchet finalize`: a loop's kept history as a short series of clean
// commits on a new branch, for review as a pull request. The loop commits
// form a chain base -> k1 -> k2 -> ... (one per keep). Consecutive keeps
// whose changes touch the same lines, or lines within `near` of each other,
// in the same file (as git would show them in one hunk) are one improvement
// and become one commit; a keep that touches other lines starts the next.
// Each new commit takes the exact tree of the last loop commit of its
// group, so the series ends on the tree of the loop's best commit. Only
// objects and one new branch ref are written: HEAD, the index, the working
// tree and the loop branch stay as they are. libgit2, in-process.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ratchet {

/// Lines a change touched in one file: [start, start + count) in one side's
/// numbering (count 0: nothing on that side; the change sits after line
/// `start`, as in a unified diff's hunk header).
struct LineSpan {
  int start = 0;
  int count = 0;
};
struct FileTouch {
  std::string path;
  bool whole = false;             // added, deleted or binary: the whole file
  std::vector<LineSpan> before;   // in the old commit's lines
  std::vector<LineSpan> after;    // in the new commit's lines
};

/// Whether change B (from X to Y) touches what change A (from W to X) did:
/// A's `after` spans against B's `before` spans, both in X's lines.
bool TouchesSameLines(const std::vector<FileTouch>& a, const std::vector<FileTouch>& b, int near);

/// A new commit of the series: the tree of `tree_of` with `message`.
struct SeriesCommit {
  std::string tree_of;  // a loop commit
  std::string message;
};

class Finalizer {
 public:
  /// Opens the repository whose working tree is `dir`.
  static bool Open(const std::string& dir, std::unique_ptr<Finalizer>* out, std::string* err);
  ~Finalizer();
  Finalizer(const Finalizer&) = delete;
  Finalizer& operator=(const Finalizer&) = delete;

  /// What changed from commit `from` to commit `to`, per file (no context).
  bool Touches(const std::string& from, const std::string& to, std::vector<FileTouch>* out,
               std::string* err);
  /// Groups the chain `commits` (base first, then one per keep) into runs of
  /// consecutive keeps: each group lists indexes into `commits` (1-based keeps).
  bool Group(const std::vector<std::string>& commits, int near,
             std::vector<std::vector<int>>* groups, std::string* err);
  /// Writes the series on `base` and creates refs/heads/<branch> at its tip,
  /// refusing a branch that exists. *shas gets the new commits, oldest first.
  bool Write(const std::string& base, const std::string& branch,
             const std::vector<SeriesCommit>& series, std::vector<std::string>* shas,
             std::string* err);

 private:
  struct Impl;
  explicit Finalizer(Impl* impl) : impl_(impl) {}
  Impl* impl_;
};

}  // namespace ratchet
