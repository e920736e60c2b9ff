// What the libgit2 adapters of src/vcs share: owning pointers for libgit2
// objects, its last error as ours, object ids as hex, and a revision
// resolved to a commit. Internal to src/vcs.
#pragma once

#include <git2.h>

#include <memory>
#include <string>

namespace ratchet::git {

template <typename T, void (*F)(T*)>
struct Free {
  void operator()(T* p) const { F(p); }
};
using RefPtr = std::unique_ptr<git_reference, Free<git_reference, git_reference_free>>;
using ObjectPtr = std::unique_ptr<git_object, Free<git_object, git_object_free>>;
using CommitPtr = std::unique_ptr<git_commit, Free<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, Free<git_tree, git_tree_free>>;
using BlobPtr = std::unique_ptr<git_blob, Free<git_blob, git_blob_free>>;
using IndexPtr = std::unique_ptr<git_index, Free<git_index, git_index_free>>;
using DiffPtr = std::unique_ptr<git_diff, Free<git_diff, git_diff_free>>;
using StatsPtr = std::unique_ptr<git_diff_stats, Free<git_diff_stats, git_diff_stats_free>>;
using StatusPtr = std::unique_ptr<git_status_list, Free<git_status_list, git_status_list_free>>;
using SigPtr = std::unique_ptr<git_signature, Free<git_signature, git_signature_free>>;
using ConflictIterPtr =
    std::unique_ptr<git_index_conflict_iterator,
                    Free<git_index_conflict_iterator, git_index_conflict_iterator_free>>;

/// Sets *err to "what: <libgit2's last error>"; returns false.
bool Fail(const std::string& what, std::string* err);

/// The full hex id.
std::string Hex(const git_oid& oid);

/// The first 7 hex digits, as in messages.
std::string ShortSha(const std::string& sha);

/// `rev` (a sha, ref or any revision git understands) peeled to a commit.
bool LookupCommit(git_repository* repo, const std::string& rev, CommitPtr* out, std::string* err);

}  // namespace ratchet::git
