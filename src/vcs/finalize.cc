#include "vcs/finalize.h"

#include "vcs/git_util.h"

#include <git2.h>

#include <memory>

namespace ratchet {
namespace {

using git::CommitPtr;
using git::DiffPtr;
using git::Fail;
using git::Hex;
using git::LookupCommit;
using git::ObjectPtr;
using git::RefPtr;
using git::SigPtr;
using git::TreePtr;

// The last line a span touches: an insertion (count 0, after line `start`)
// touches the lines on both sides of it.
int End(const LineSpan& s) { return s.count == 0 ? s.start + 1 : s.start + s.count - 1; }

// Spans `a` and `b` overlap, or lie within `near` lines of each other.
bool Near(const LineSpan& a, const LineSpan& b, int near) {
  return a.start <= End(b) + near && b.start <= End(a) + near;
}

struct DiffState {
  std::vector<FileTouch>* out;
};

int OnFile(const git_diff_delta* delta, float, void* payload) {
  auto* state = static_cast<DiffState*>(payload);
  FileTouch t;
  t.path = delta->new_file.path ? delta->new_file.path : delta->old_file.path;
  t.whole = delta->status == GIT_DELTA_ADDED || delta->status == GIT_DELTA_DELETED ||
            (delta->flags & GIT_DIFF_FLAG_BINARY) != 0;
  state->out->push_back(std::move(t));
  return 0;
}

int OnHunk(const git_diff_delta* delta, const git_diff_hunk* hunk, void* payload) {
  auto* state = static_cast<DiffState*>(payload);
  if (state->out->empty()) return 0;
  FileTouch& t = state->out->back();
  (void)delta;
  t.before.push_back(LineSpan{hunk->old_start, hunk->old_lines});
  t.after.push_back(LineSpan{hunk->new_start, hunk->new_lines});
  return 0;
}

int OnBinary(const git_diff_delta*, const git_diff_binary*, void* payload) {
  auto* state = static_cast<DiffState*>(payload);
  if (!state->out->empty()) state->out->back().whole = true;
  return 0;
}

}  // namespace

bool TouchesSameLines(const std::vector<FileTouch>& a, const std::vector<FileTouch>& b, int near) {
  for (const FileTouch& fa : a) {
    for (const FileTouch& fb : b) {
      if (fa.path != fb.path) continue;
      if (fa.whole || fb.whole) return true;
      for (const LineSpan& x : fa.after)
        for (const LineSpan& y : fb.before)
          if (Near(x, y, near)) return true;
    }
  }
  return false;
}

struct Finalizer::Impl {
  git_repository* repo = nullptr;
};

bool Finalizer::Open(const std::string& dir, std::unique_ptr<Finalizer>* out, std::string* err) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  if (git_repository_open_ext(&repo, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    Fail("cannot open the git repository in " + dir, err);
    git_libgit2_shutdown();
    return false;
  }
  auto* impl = new Impl;
  impl->repo = repo;
  out->reset(new Finalizer(impl));
  return true;
}

Finalizer::~Finalizer() {
  git_repository_free(impl_->repo);
  delete impl_;
  git_libgit2_shutdown();
}

bool Finalizer::Touches(const std::string& from, const std::string& to,
                        std::vector<FileTouch>* out, std::string* err) {
  CommitPtr a, b;
  if (!LookupCommit(impl_->repo, from, &a, err) || !LookupCommit(impl_->repo, to, &b, err))
    return false;
  git_tree* ta = nullptr;
  git_tree* tb = nullptr;
  if (git_commit_tree(&ta, a.get()) != 0) return Fail("cannot read the tree of " + from, err);
  TreePtr hold_a(ta);
  if (git_commit_tree(&tb, b.get()) != 0) return Fail("cannot read the tree of " + to, err);
  TreePtr hold_b(tb);
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.context_lines = 0;
  options.interhunk_lines = 0;
  git_diff* diff = nullptr;
  if (git_diff_tree_to_tree(&diff, impl_->repo, ta, tb, &options) != 0)
    return Fail("cannot diff " + from + " and " + to, err);
  DiffPtr hold(diff);
  out->clear();
  DiffState state{out};
  if (git_diff_foreach(diff, OnFile, OnBinary, OnHunk, nullptr, &state) != 0)
    return Fail("cannot read the diff of " + from + " and " + to, err);
  return true;
}

bool Finalizer::Group(const std::vector<std::string>& commits, int near,
                      std::vector<std::vector<int>>* groups, std::string* err) {
  groups->clear();
  std::vector<FileTouch> previous;
  for (size_t i = 1; i < commits.size(); ++i) {
    std::vector<FileTouch> touch;
    if (!Touches(commits[i - 1], commits[i], &touch, err)) return false;
    if (!groups->empty() && TouchesSameLines(previous, touch, near))
      groups->back().push_back(static_cast<int>(i));
    else
      groups->push_back({static_cast<int>(i)});
    previous = std::move(touch);
  }
  return true;
}

bool Finalizer::Write(const std::string& base, const std::string& branch,
                      const std::vector<SeriesCommit>& series, std::vector<std::string>* shas,
                      std::string* err) {
  const std::string ref = "refs/heads/" + branch;
  if (git_reference_is_valid_name(ref.c_str()) != 1) {
    *err = "'" + branch + "' is not a valid branch name";
    return false;
  }
  git_reference* existing = nullptr;
  if (git_reference_lookup(&existing, impl_->repo, ref.c_str()) == 0) {
    git_reference_free(existing);
    *err = "branch " + branch + " exists already; give another with --branch NAME, or delete "
           "it (git branch -D " + branch + ")";
    return false;
  }
  git_signature* raw = nullptr;
  if (git_signature_default(&raw, impl_->repo) != 0 &&
      git_signature_now(&raw, "ratchet", "ratchet@localhost") != 0)
    return Fail("cannot make a commit signature", err);
  SigPtr sig(raw);

  CommitPtr parent;
  if (!LookupCommit(impl_->repo, base, &parent, err)) return false;
  shas->clear();
  for (const SeriesCommit& c : series) {
    CommitPtr source;
    if (!LookupCommit(impl_->repo, c.tree_of, &source, err)) return false;
    git_tree* tree = nullptr;
    if (git_commit_tree(&tree, source.get()) != 0)
      return Fail("cannot read the tree of " + c.tree_of, err);
    TreePtr hold(tree);
    git_oid id;
    const git_commit* parents[] = {parent.get()};
    if (git_commit_create(&id, impl_->repo, nullptr, sig.get(), sig.get(), nullptr,
                          c.message.c_str(), tree, 1, parents) != 0)
      return Fail("cannot write a commit", err);
    shas->push_back(Hex(id));
    if (!LookupCommit(impl_->repo, shas->back(), &parent, err)) return false;
  }
  git_reference* made = nullptr;
  if (git_reference_create(&made, impl_->repo, ref.c_str(), git_commit_id(parent.get()), 0,
                           "ratchet finalize") != 0)
    return Fail("cannot create branch " + branch, err);
  RefPtr hold(made);
  return true;
}

}  // namespace ratchet
