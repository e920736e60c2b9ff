#include "vcs/git_repo.h"

#include <git2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/read_file.h"
#include "vcs/git_util.h"
#include "vcs/work_copy.h"

namespace ratchet {
namespace {

using git::CommitPtr;
using git::DiffPtr;
using git::Fail;
using git::Hex;
using git::IndexPtr;
using git::LookupCommit;
using git::ObjectPtr;
using git::RefPtr;
using git::StatsPtr;
using git::StatusPtr;
using git::TreePtr;

constexpr const char kStateDir[] = ".ratchet";
// Every tried candidate gets a ref, and the check after every step reads
// them all: one loose file each costs about 7 us, packed about 0.5 us (5,000
// refs, a throwaway timing). So they are packed now and then.
constexpr int kPackRefsEvery = 64;

/// Fills *err with "<what>: <libgit2's last message>" and returns false.
/// The engine's own state is never part of a candidate, whatever .gitignore says.
bool IsStatePath(const char* path) {
  size_t n = sizeof(kStateDir) - 1;
  return std::strncmp(path, kStateDir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

}  // namespace

bool GitRepo::Open(const std::string& dir, std::unique_ptr<GitRepo>* repo, std::string* err) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = dir + " is not a directory";
    return false;
  }
  git_libgit2_init();
  // Only the repository's own configuration: a global or system file (which a
  // step could have written, e.g. $HOME/.gitconfig) changes nothing ratchet
  // does. Process-wide, and ratchet opens no other repositories.
  for (git_config_level_t level :
       {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
        GIT_CONFIG_LEVEL_PROGRAMDATA})
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
  git_repository* r = nullptr;
  // NO_SEARCH: a loop directory inside another repository (a checkout of
  // ratchet itself, say) must not silently become that repository.
  int rc = git_repository_open_ext(&r, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND) {
    git_libgit2_shutdown();
    *err = dir + " is not a git repository (run `git init` there, or use `ratchet init`)";
    return false;
  }
  if (rc != 0) {
    Fail("cannot open the git repository in " + dir, err);
    git_libgit2_shutdown();
    return false;
  }
  std::unique_ptr<GitRepo> result(new GitRepo(dir, r));
  if (git_repository_is_bare(r)) {
    *err = dir + " is a bare git repository; a loop needs a working tree";
    return false;
  }
  // An in-memory rule for this handle only: status, add and checkout below
  // never see .ratchet/ (so RestoreTo cannot delete the ledger), even before
  // EnsureExcluded has written it to .git/info/exclude.
  if (git_ignore_add_rule(r, "/.ratchet/\n") != 0)
    return Fail("cannot set up ignore rules in " + dir, err);
  *repo = std::move(result);
  return true;
}

GitRepo::~GitRepo() {
  git_repository_free(repo_);
  git_libgit2_shutdown();
}

std::vector<std::string> GitRepo::GitDirs() const {
  std::vector<std::string> dirs{git_repository_path(repo_)};
  std::string common = git_repository_commondir(repo_);
  if (common != dirs.front()) dirs.push_back(common);
  return dirs;
}

bool GitRepo::EnsureExcluded(const std::string& pattern, std::string* err) {
  std::string info_dir = std::string(git_repository_path(repo_)) + "info";
  std::string path = info_dir + "/exclude";
  std::string content;
  if (!ReadWholeFile(path, &content)) content.clear();  // none yet
  std::istringstream lines(content);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == pattern) return true;
  }
  if (::mkdir(info_dir.c_str(), 0777) != 0 && errno != EEXIST) {
    *err = "cannot create " + info_dir + ": " + std::strerror(errno);
    return false;
  }
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!content.empty() && content.back() != '\n') out << '\n';
  out << pattern << '\n';
  out.close();
  if (!out) {
    *err = "cannot write " + path;
    return false;
  }
  return true;
}

bool GitRepo::Head(std::string* sha, std::string* err) {
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, repo_, "HEAD");
  if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH) {
    *err = dir_ + " has no commit yet (commit its files first)";
    return false;
  }
  if (rc != 0) return Fail("cannot read HEAD in " + dir_, err);
  *sha = Hex(oid);
  return true;
}

bool GitRepo::CurrentBranch(std::string* branch, std::string* err) {
  git_reference* ref = nullptr;
  if (git_reference_lookup(&ref, repo_, "HEAD") != 0)
    return Fail("cannot read HEAD in " + dir_, err);
  RefPtr head(ref);
  branch->clear();
  if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
    std::string target = git_reference_symbolic_target(ref);
    const std::string prefix = "refs/heads/";
    if (target.rfind(prefix, 0) == 0) *branch = target.substr(prefix.size());
  }
  return true;
}

bool GitRepo::FreshIndex(git_index** index, std::string* err) {
  if (git_repository_index(index, repo_) != 0) return Fail("cannot open the git index", err);
  // Another process (the user, a proposer running git) may have written it.
  if (git_index_read(*index, 0) != 0) {
    git_index_free(*index);
    return Fail("cannot read the git index", err);
  }
  return true;
}

bool GitRepo::TreeOf(const std::string& rev, git_tree** tree, std::string* err) {
  *tree = nullptr;
  if (rev.empty()) return true;
  CommitPtr commit;
  if (!LookupCommit(repo_, rev, &commit, err)) return false;
  if (git_commit_tree(tree, commit.get()) != 0) return Fail("cannot read the tree of " + rev, err);
  return true;
}

bool GitRepo::DirtyPaths(std::vector<std::string>* paths, std::string* err) {
  git_index* raw_index = nullptr;
  if (!FreshIndex(&raw_index, err)) return false;
  IndexPtr index(raw_index);
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo_, &opts) != 0)
    return Fail("cannot compute git status in " + dir_, err);
  StatusPtr list(raw);
  paths->clear();
  size_t n = git_status_list_entrycount(raw);
  for (size_t i = 0; i < n; ++i) {
    const git_status_entry* e = git_status_byindex(raw, i);
    if (e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    for (const git_diff_delta* d : {e->head_to_index, e->index_to_workdir}) {
      if (!d) continue;
      const char* p = d->new_file.path ? d->new_file.path : d->old_file.path;
      if (p && !IsStatePath(p)) paths->push_back(p);
    }
  }
  std::sort(paths->begin(), paths->end());
  paths->erase(std::unique(paths->begin(), paths->end()), paths->end());
  return true;
}

bool GitRepo::HasCommit(const std::string& sha, bool* exists, std::string* err) {
  git_oid oid;
  *exists = false;
  if (sha.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, sha.c_str()) != 0) return true;
  git_commit* commit = nullptr;
  int rc = git_commit_lookup(&commit, repo_, &oid);
  if (rc == 0) {
    git_commit_free(commit);
    *exists = true;
    return true;
  }
  return rc == GIT_ENOTFOUND || Fail("cannot look up commit " + sha, err);
}

bool GitRepo::ResolveRef(const std::string& ref, std::string* sha, std::string* err) {
  sha->clear();
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo_, ref.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    // Not a full ref name: try the short forms git accepts ("main", "ratchet/x").
    rc = git_reference_dwim(&raw, repo_, ref.c_str());
  }
  if (rc == GIT_ENOTFOUND) return true;
  if (rc != 0) return Fail("cannot resolve ref '" + ref + "'", err);
  RefPtr holder(raw);
  git_object* peeled = nullptr;
  rc = git_reference_peel(&peeled, raw, GIT_OBJECT_COMMIT);
  if (rc == GIT_ENOTFOUND) return true;  // a symbolic ref to an unborn branch
  if (rc != 0) return Fail("ref '" + ref + "' does not point at a commit", err);
  ObjectPtr obj(peeled);
  *sha = Hex(*git_object_id(peeled));
  return true;
}

bool GitRepo::CheckoutBranch(const std::string& branch, const std::string& start,
                             std::string* err) {
  int valid = 0;
  if (git_branch_name_is_valid(&valid, branch.c_str()) != 0 || !valid) {
    *err = "'" + branch + "' is not a valid git branch name";
    return false;
  }
  const std::string full = "refs/heads/" + branch;
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo_, full.c_str());
  if (rc == GIT_ENOTFOUND) {
    CommitPtr from;
    if (!LookupCommit(repo_, start.empty() ? "HEAD" : start, &from, err)) return false;
    if (git_branch_create(&raw, repo_, branch.c_str(), from.get(), 0) != 0)
      return Fail("cannot create branch " + branch, err);
  } else if (rc != 0) {
    return Fail("cannot read branch " + branch, err);
  }
  RefPtr ref(raw);
  git_object* target = nullptr;
  if (git_reference_peel(&target, raw, GIT_OBJECT_COMMIT) != 0)
    return Fail("branch " + branch + " does not point at a commit", err);
  ObjectPtr target_holder(target);
  git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
  // SAFE: refuse rather than overwrite uncommitted work, as `git checkout` does.
  opts.checkout_strategy = GIT_CHECKOUT_SAFE;
  if (git_checkout_tree(repo_, target, &opts) != 0)
    return Fail("cannot check out " + branch + " in " + dir_, err);
  if (git_repository_set_head(repo_, full.c_str()) != 0)
    return Fail("cannot point HEAD at " + branch, err);
  owned_.Expect(full, Hex(*git_object_id(target)));
  owned_.RereadHead();
  return true;
}

bool GitRepo::SetRef(const std::string& ref, const std::string& sha, std::string* err) {
  if (ref.rfind("refs/", 0) != 0) {
    *err = "ref '" + ref + "' must start with refs/";
    return false;
  }
  CommitPtr commit;
  if (!LookupCommit(repo_, sha, &commit, err)) return false;
  git_reference* raw = nullptr;
  if (git_reference_create(&raw, repo_, ref.c_str(), git_commit_id(commit.get()), 1,
                           "ratchet: record candidate") != 0) {
    return Fail("cannot set " + ref, err);
  }
  git_reference_free(raw);
  owned_.Expect(ref, Hex(*git_commit_id(commit.get())));
  if (++refs_set_ % kPackRefsEvery == 0) PackRefs();
  return true;
}

void GitRepo::PackRefs() {
  // Best effort, as `git pack-refs` does it: a lock held by a git command
  // of the user's only means the refs stay loose a while longer.
  git_refdb* refdb = nullptr;
  if (git_repository_refdb(&refdb, repo_) != 0) return;
  git_refdb_compress(refdb);
  git_refdb_free(refdb);
}

bool GitRepo::WatchOwnedState(const std::string& branch, std::string* err) {
  PackRefs();
  return owned_.Capture(repo_, branch, err);
}

bool GitRepo::RestoreOwnedState(std::vector<std::string>* changes, std::string* err) {
  return owned_.CheckAndRestore(repo_, changes, err);
}

bool GitRepo::ResetWorktree(const std::string& sha, std::string* err) {
  CommitPtr commit;
  if (!LookupCommit(repo_, sha, &commit, err)) return false;
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit.get()) != 0) return Fail("cannot read tree", err);
  TreePtr tree(raw_tree);
  git_index* raw_index = nullptr;
  if (!FreshIndex(&raw_index, err)) return false;
  IndexPtr index(raw_index);

  // The baseline is what the index tracks now (a candidate snapshot, or HEAD):
  // files tracked there and absent from `sha` are deleted even if ignored, the
  // way `git reset --hard` deletes them. Anything else neither in the index
  // nor ignored is removed by REMOVE_UNTRACKED. A conflicted index has no
  // tree; HEAD is the baseline then.
  TreePtr baseline;
  git_oid baseline_id;
  if (git_index_write_tree(&baseline_id, raw_index) == 0) {
    git_tree* raw_baseline = nullptr;
    if (git_tree_lookup(&raw_baseline, repo_, &baseline_id) == 0) baseline.reset(raw_baseline);
  }
  git_checkout_options opts = GIT_CHECKOUT_OPTIONS_INIT;
  opts.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
  opts.baseline = baseline.get();
  if (git_checkout_tree(repo_, reinterpret_cast<git_object*>(raw_tree), &opts) != 0)
    return Fail("cannot restore the working tree of " + dir_ + " to " + git::ShortSha(sha), err);
  // Checkout updates the entries it touched; make the index exactly the tree
  // (read_tree keeps the stat data of unchanged entries, so it stays fast).
  if (git_index_read(raw_index, 1) != 0 || git_index_read_tree(raw_index, raw_tree) != 0 ||
      git_index_write(raw_index) != 0) {
    return Fail("cannot reset the git index to " + git::ShortSha(sha), err);
  }
  return true;
}

bool GitRepo::AdvanceBranch(const std::string& branch, const std::string& sha,
                            const std::string& expected_old, std::string* err) {
  std::string current;
  if (!CurrentBranch(&current, err)) return false;
  if (current != branch) {
    *err = "cannot advance " + branch + ": the checked-out branch is " +
           (current.empty() ? std::string("none (detached HEAD)") : current);
    return false;
  }
  CommitPtr target, old;
  if (!LookupCommit(repo_, sha, &target, err) || !LookupCommit(repo_, expected_old, &old, err))
    return false;
  const std::string full = "refs/heads/" + branch;
  git_reference* raw = nullptr;
  int rc = git_reference_create_matching(&raw, repo_, full.c_str(), git_commit_id(target.get()), 1,
                                         git_commit_id(old.get()), "ratchet: keep");
  if (rc == GIT_EMODIFIED) {
    std::string now;
    std::string ignored;
    ResolveRef(full, &now, &ignored);
    *err = "branch " + branch + " moved: expected it at " + git::ShortSha(expected_old) +
           ", it is at " + (now.empty() ? std::string("nothing") : git::ShortSha(now)) +
           " (did something else commit to the loop branch?)";
    return false;
  }
  if (rc != 0) return Fail("cannot advance " + branch, err);
  git_reference_free(raw);
  owned_.Expect(full, Hex(*git_commit_id(target.get())));
  return ResetWorktree(sha, err);
}

bool GitRepo::RestoreTo(const std::string& sha, std::string* err) {
  CommitPtr commit;
  if (!LookupCommit(repo_, sha, &commit, err)) return false;
  // The tree first, then HEAD: an interruption in between leaves HEAD where it
  // was, and restoring again finishes the job.
  if (!ResetWorktree(sha, err)) return false;
  const git_oid* id = git_commit_id(commit.get());
  std::string branch;
  if (!CurrentBranch(&branch, err)) return false;
  if (branch.empty()) {
    if (git_repository_set_head_detached(repo_, id) != 0)
      return Fail("cannot move HEAD to " + git::ShortSha(sha), err);
    owned_.RereadHead();
    return true;
  }
  git_reference* raw = nullptr;
  if (git_reference_create(&raw, repo_, ("refs/heads/" + branch).c_str(), id, 1,
                           "ratchet: restore") != 0) {
    return Fail("cannot move " + branch + " to " + git::ShortSha(sha), err);
  }
  git_reference_free(raw);
  owned_.Expect("refs/heads/" + branch, Hex(*id));
  return true;
}

bool GitRepo::DiffTrees(const std::string& from, const std::string& to, git_diff** diff,
                        std::string* err) {
  git_tree *a = nullptr, *b = nullptr;
  if (!TreeOf(from, &a, err)) return false;
  TreePtr ta(a);
  if (!TreeOf(to, &b, err)) return false;
  TreePtr tb(b);
  if (git_diff_tree_to_tree(diff, repo_, a, b, nullptr) != 0)
    return Fail("cannot diff " + from + " and " + to, err);
  return true;
}

bool GitRepo::DiffStat(const std::string& from, const std::string& to, std::string* stat,
                       std::string* err) {
  git_diff* raw = nullptr;
  if (!DiffTrees(from, to, &raw, err)) return false;
  DiffPtr diff(raw);
  git_diff_stats* raw_stats = nullptr;
  if (git_diff_get_stats(&raw_stats, raw) != 0) return Fail("cannot count the diff", err);
  StatsPtr stats(raw_stats);
  size_t files = git_diff_stats_files_changed(raw_stats);
  *stat = std::to_string(files) + (files == 1 ? " file" : " files") + ", +" +
          std::to_string(git_diff_stats_insertions(raw_stats)) + " -" +
          std::to_string(git_diff_stats_deletions(raw_stats));
  return true;
}

bool GitRepo::Diff(const std::string& from, const std::string& to, std::string* diff_text,
                   std::string* err) {
  git_diff* raw = nullptr;
  if (!DiffTrees(from, to, &raw, err)) return false;
  DiffPtr diff(raw);
  git_buf buf = GIT_BUF_INIT;
  if (git_diff_to_buf(&buf, raw, GIT_DIFF_FORMAT_PATCH) != 0)
    return Fail("cannot format the diff", err);
  diff_text->assign(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  return true;
}

void GitRepo::Identity(std::string* name, std::string* email) {
  *name = "ratchet";
  *email = "ratchet@localhost";
  git_config* raw = nullptr;
  if (git_repository_config_snapshot(&raw, repo_) != 0) return;
  git_buf buf = GIT_BUF_INIT;
  if (git_config_get_string_buf(&buf, raw, "user.name") == 0 && buf.size > 0) name->assign(buf.ptr);
  git_buf_dispose(&buf);
  buf = GIT_BUF_INIT;
  if (git_config_get_string_buf(&buf, raw, "user.email") == 0 && buf.size > 0)
    email->assign(buf.ptr);
  git_buf_dispose(&buf);
  git_config_free(raw);
}

bool GitRepo::CheckoutCopy(const std::string& sha, const std::string& dir, std::string* err) {
  return ratchet::CheckoutCopy(repo_, sha, dir, err);
}

bool GitRepo::ScanCopy(const std::string& dir, const std::string& base, CopyScan* scan,
                       std::string* err) {
  return ratchet::ScanCopy(repo_, dir, base, scan, err);
}

bool GitRepo::CommitScan(const CopyScan& scan, const std::string& message, std::string* sha,
                         std::string* err) {
  std::string name, email;
  Identity(&name, &email);
  return ratchet::CommitScan(repo_, scan, message, name, email, sha, err);
}

bool GitRepo::Rebase(const std::string& base, const std::string& theirs, const std::string& ours,
                     const std::string& message, std::string* sha, std::string* conflict,
                     std::string* err) {
  std::string name, email;
  Identity(&name, &email);
  return RebaseCommit(repo_, base, theirs, ours, message, name, email, sha, conflict, err);
}

}  // namespace ratchet
