#include "vcs/work_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include "vcs/git_util.h"

#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

namespace ratchet {
namespace {

using git::BlobPtr;
using git::CommitPtr;
using git::ConflictIterPtr;
using git::Fail;
using git::Hex;
using git::IndexPtr;
using git::ObjectPtr;
using git::SigPtr;
using git::TreePtr;

// A candidate file larger than this is refused rather than held in memory.
constexpr off_t kMaxFileBytes = 256ll << 20;

bool FailErrno(const std::string& what, std::string* err) {
  *err = what + ": " + std::strerror(errno);
  return false;
}

bool TreeOfCommit(git_repository* repo, const std::string& rev, CommitPtr* commit, TreePtr* tree,
                  std::string* err) {
  git_object* obj = nullptr;
  if (git_revparse_single(&obj, repo, rev.c_str()) != 0)
    return Fail("cannot resolve revision '" + rev + "'", err);
  ObjectPtr holder(obj);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0)
    return Fail("'" + rev + "' is not a commit", err);
  commit->reset(reinterpret_cast<git_commit*>(peeled));
  git_tree* raw = nullptr;
  if (git_commit_tree(&raw, commit->get()) != 0) return Fail("cannot read the tree of " + rev, err);
  tree->reset(raw);
  return true;
}

struct TreeEntry {
  git_oid id;
  git_filemode_t mode;
};

// Every blob, link and submodule of `tree` by path (folders are implied).
bool FlattenTree(git_tree* tree, std::map<std::string, TreeEntry>* out, std::string* err) {
  auto walk = [](const char* root, const git_tree_entry* entry, void* payload) -> int {
    git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode == GIT_FILEMODE_TREE) return 0;
    auto* map = static_cast<std::map<std::string, TreeEntry>*>(payload);
    (*map)[std::string(root) + git_tree_entry_name(entry)] = {*git_tree_entry_id(entry), mode};
    return 0;
  };
  out->clear();
  if (tree && git_tree_walk(tree, GIT_TREEWALK_PRE, walk, out) != 0)
    return Fail("cannot read a tree", err);
  return true;
}

bool ReadAll(int fd, std::string* out) {
  out->clear();
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// What a directory entry that git cannot hold is, for the scope message.
std::string KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "is a fifo";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device node";
  return "is not a regular file";
}

class Scanner {
 public:
  Scanner(git_repository* repo, const std::map<std::string, TreeEntry>& base, CopyScan* scan)
      : repo_(repo), base_(base), scan_(scan) {}

  bool Walk(const std::string& abs, const std::string& rel, std::string* err) {
    DIR* d = opendir(abs.c_str());
    if (!d) return FailErrno("cannot read " + abs, err);
    std::vector<std::string> names;
    while (struct dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.push_back(e->d_name);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      const std::string child_abs = abs + "/" + name;
      const std::string child_rel = rel.empty() ? name : rel + "/" + name;
      struct stat st;
      if (lstat(child_abs.c_str(), &st) != 0) return FailErrno("cannot stat " + child_abs, err);
      seen_.push_back(child_rel);
      if (S_ISDIR(st.st_mode)) {
        seen_.pop_back();
        if (!Walk(child_abs, child_rel, err)) return false;
      } else if (S_ISREG(st.st_mode)) {
        if (!File(child_abs, child_rel, st, err)) return false;
      } else if (S_ISLNK(st.st_mode)) {
        if (!Link(child_abs, child_rel, err)) return false;
      } else {
        Add(child_rel, KindOf(st.st_mode));
      }
    }
    return true;
  }

  void Deletions() {
    std::sort(seen_.begin(), seen_.end());
    for (const auto& [path, entry] : base_) {
      if (entry.mode == GIT_FILEMODE_COMMIT) continue;  // submodules are never checked out
      if (!std::binary_search(seen_.begin(), seen_.end(), path))
        scan_->changes.push_back({FileChange::Kind::kDeleted, path});
    }
    std::sort(scan_->changes.begin(), scan_->changes.end(),
              [](const FileChange& a, const FileChange& b) { return a.path < b.path; });
  }

 private:
  bool File(const std::string& abs, const std::string& rel, const struct stat& st,
            std::string* err) {
    const bool exec = (st.st_mode & S_IXUSR) != 0;
    if (st.st_size > kMaxFileBytes) {
      Add(rel, "is larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
      return true;
    }
    int fd = open(abs.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return FailErrno("cannot read " + abs, err);
    std::string bytes;
    bool ok = ReadAll(fd, &bytes);
    close(fd);
    if (!ok) return FailErrno("cannot read " + abs, err);
    git_oid oid;
    if (git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) != 0)
      return Fail("cannot hash " + abs, err);
    auto it = base_.find(rel);
    const git_filemode_t mode = exec ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    if (it != base_.end() && it->second.mode == mode && git_oid_equal(&it->second.id, &oid))
      return true;
    scan_->changes.push_back(
        {it == base_.end() ? FileChange::Kind::kAdded : FileChange::Kind::kModified, rel});
    scan_->contents[rel] = {std::move(bytes), exec};
    return true;
  }

  bool Link(const std::string& abs, const std::string& rel, std::string* err) {
    char buf[4096];
    ssize_t n = readlink(abs.c_str(), buf, sizeof buf);
    if (n < 0) return FailErrno("cannot read the link " + abs, err);
    const std::string target(buf, static_cast<size_t>(n));
    auto it = base_.find(rel);
    if (it != base_.end() && it->second.mode == GIT_FILEMODE_LINK) {
      git_blob* raw = nullptr;
      if (git_blob_lookup(&raw, repo_, &it->second.id) != 0)
        return Fail("cannot read the link " + rel + " of the base commit", err);
      BlobPtr blob(raw);
      std::string was(static_cast<const char*>(git_blob_rawcontent(raw)),
                      static_cast<size_t>(git_blob_rawsize(raw)));
      if (was == target) return true;  // a link the commit already had, unchanged
    }
    Add(rel, "is a symbolic link (to " + target + ")");
    return true;
  }

  void Add(const std::string& rel, const std::string& problem) {
    scan_->changes.push_back({base_.count(rel) ? FileChange::Kind::kModified
                                               : FileChange::Kind::kAdded,
                              rel, problem});
  }

  git_repository* repo_;
  const std::map<std::string, TreeEntry>& base_;
  CopyScan* scan_;
  std::vector<std::string> seen_;
};

bool MakeSignature(const std::string& name, const std::string& email, SigPtr* sig,
                   std::string* err) {
  git_signature* raw = nullptr;
  if (git_signature_now(&raw, name.c_str(), email.c_str()) != 0)
    return Fail("cannot make a commit signature", err);
  sig->reset(raw);
  return true;
}

bool CommitIndex(git_repository* repo, git_index* index, git_commit* parent,
                 const std::string& message, const std::string& name, const std::string& email,
                 std::string* sha, std::string* err) {
  git_oid tree_id;
  if (git_index_write_tree_to(&tree_id, index, repo) != 0)
    return Fail("cannot write the candidate's tree", err);
  git_tree* raw_tree = nullptr;
  if (git_tree_lookup(&raw_tree, repo, &tree_id) != 0) return Fail("cannot read a tree", err);
  TreePtr tree(raw_tree);
  SigPtr sig;
  if (!MakeSignature(name, email, &sig, err)) return false;
  std::string msg = message;
  if (msg.empty() || msg.back() != '\n') msg += '\n';
  const git_commit* parents[1] = {parent};
  git_oid commit_id;
  if (git_commit_create(&commit_id, repo, nullptr, sig.get(), sig.get(), nullptr, msg.c_str(),
                        raw_tree, 1, parents) != 0)
    return Fail("cannot create a commit", err);
  *sha = Hex(commit_id);
  return true;
}

}  // namespace

bool CheckoutCopy(git_repository* repo, const std::string& sha, const std::string& dir,
                  std::string* err) {
  CommitPtr commit;
  TreePtr tree;
  if (!TreeOfCommit(repo, sha, &commit, &tree, err)) return false;
  if (mkdir(dir.c_str(), 0755) != 0) return FailErrno("cannot create " + dir, err);
  struct Payload {
    git_repository* repo;
    std::string dir;
    std::string error;
  } payload{repo, dir, ""};
  auto walk = [](const char* root, const git_tree_entry* entry, void* p) -> int {
    auto* pl = static_cast<Payload*>(p);
    const std::string path = pl->dir + "/" + root + git_tree_entry_name(entry);
    const git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode == GIT_FILEMODE_TREE) {
      if (mkdir(path.c_str(), 0755) == 0) return 0;
      pl->error = "cannot create " + path + ": " + std::strerror(errno);
      return -1;
    }
    if (mode == GIT_FILEMODE_COMMIT) return 0;  // a submodule: nothing to write
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, pl->repo, git_tree_entry_id(entry)) != 0) {
      pl->error = "cannot read the blob of " + path;
      return -1;
    }
    BlobPtr blob(raw);
    const char* data = static_cast<const char*>(git_blob_rawcontent(raw));
    const size_t size = static_cast<size_t>(git_blob_rawsize(raw));
    if (mode == GIT_FILEMODE_LINK) {
      if (symlink(std::string(data, size).c_str(), path.c_str()) == 0) return 0;
      pl->error = "cannot create the link " + path + ": " + std::strerror(errno);
      return -1;
    }
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
    if (fd < 0 || !WriteAll(fd, data, size)) {
      pl->error = "cannot write " + path + ": " + std::strerror(errno);
      if (fd >= 0) close(fd);
      return -1;
    }
    close(fd);
    return 0;
  };
  if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, walk, &payload) != 0) {
    if (!payload.error.empty()) {
      *err = payload.error;
      return false;
    }
    return Fail("cannot check out " + sha + " into " + dir, err);
  }
  return true;
}

bool ScanCopy(git_repository* repo, const std::string& dir, const std::string& base,
              CopyScan* scan, std::string* err) {
  CommitPtr commit;
  TreePtr tree;
  if (!TreeOfCommit(repo, base, &commit, &tree, err)) return false;
  std::map<std::string, TreeEntry> entries;
  if (!FlattenTree(tree.get(), &entries, err)) return false;
  *scan = CopyScan();
  scan->base = Hex(*git_commit_id(commit.get()));
  Scanner scanner(repo, entries, scan);
  if (!scanner.Walk(dir, "", err)) return false;
  scanner.Deletions();
  return true;
}

bool CommitScan(git_repository* repo, const CopyScan& scan, const std::string& message,
                const std::string& name, const std::string& email, std::string* sha,
                std::string* err) {
  CommitPtr parent;
  TreePtr tree;
  if (!TreeOfCommit(repo, scan.base, &parent, &tree, err)) return false;
  git_index* raw = nullptr;
  if (git_index_new(&raw) != 0) return Fail("cannot make an index", err);
  IndexPtr index(raw);
  if (git_index_read_tree(raw, tree.get()) != 0) return Fail("cannot read the base tree", err);
  for (const FileChange& change : scan.changes) {
    if (!change.problem.empty()) {
      *err = "cannot commit " + change.path + ": it " + change.problem;
      return false;
    }
    if (change.kind == FileChange::Kind::kDeleted) {
      if (git_index_remove(raw, change.path.c_str(), 0) != 0)
        return Fail("cannot remove " + change.path + " from the candidate", err);
      continue;
    }
    auto it = scan.contents.find(change.path);
    if (it == scan.contents.end()) {
      *err = "the scan holds no content for " + change.path;
      return false;
    }
    git_oid blob;
    if (git_blob_create_from_buffer(&blob, repo, it->second.bytes.data(),
                                    it->second.bytes.size()) != 0)
      return Fail("cannot store " + change.path, err);
    git_index_entry entry;
    std::memset(&entry, 0, sizeof entry);
    entry.mode = it->second.executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
    entry.id = blob;
    entry.path = change.path.c_str();
    entry.file_size = static_cast<uint32_t>(it->second.bytes.size());
    if (git_index_add(raw, &entry) != 0) return Fail("cannot add " + change.path, err);
  }
  return CommitIndex(repo, raw, parent.get(), message, name, email, sha, err);
}

bool RebaseCommit(git_repository* repo, const std::string& base, const std::string& theirs,
                  const std::string& ours, const std::string& message, const std::string& name,
                  const std::string& email, std::string* sha, std::string* conflict,
                  std::string* err) {
  CommitPtr base_commit, their_commit, our_commit;
  TreePtr base_tree, their_tree, our_tree;
  if (!TreeOfCommit(repo, base, &base_commit, &base_tree, err) ||
      !TreeOfCommit(repo, theirs, &their_commit, &their_tree, err) ||
      !TreeOfCommit(repo, ours, &our_commit, &our_tree, err))
    return false;
  git_merge_options opts = GIT_MERGE_OPTIONS_INIT;
  opts.flags = static_cast<git_merge_flag_t>(0);  // report conflicts in the index instead
  git_index* raw = nullptr;
  if (git_merge_trees(&raw, repo, base_tree.get(), our_tree.get(), their_tree.get(), &opts) != 0)
    return Fail("cannot merge " + theirs + " onto " + ours, err);
  IndexPtr index(raw);
  sha->clear();
  conflict->clear();
  if (git_index_has_conflicts(raw)) {
    git_index_conflict_iterator* raw_it = nullptr;
    if (git_index_conflict_iterator_new(&raw_it, raw) == 0) {
      ConflictIterPtr it(raw_it);
      const git_index_entry *a = nullptr, *o = nullptr, *t = nullptr;
      if (git_index_conflict_next(&a, &o, &t, raw_it) == 0) {
        const git_index_entry* any = o ? o : t ? t : a;
        if (any) *conflict = any->path;
      }
    }
    if (conflict->empty()) *conflict = "(unknown path)";
    return true;
  }
  return CommitIndex(repo, raw, our_commit.get(), message, name, email, sha, err);
}

}  // namespace ratchet
