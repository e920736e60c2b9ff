#include "vcs/owned_state.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "base/durable_file.h"
#include "base/read_file.h"
#include "vcs/git_util.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

const char kOwnedRefs[] = "refs/ratchet/";

bool WithSlash(std::string* dir) {
  if (dir->empty()) return false;
  if (dir->back() != '/') dir->push_back('/');
  return true;
}

// One path's entry, without following a link; false when it is neither a
// regular file nor a link (or is gone).
bool ReadEntry(const std::string& path, OwnedState::File* file) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  file->mode = st.st_mode & 07777;
  std::error_code ec;
  if (S_ISLNK(st.st_mode)) {
    file->symlink = true;
    file->bytes = fs::read_symlink(path, ec).string();
    return !ec;
  }
  if (!S_ISREG(st.st_mode)) return false;
  return ReadWholeFile(path, &file->bytes);
}

bool Same(const OwnedState::File& a, const OwnedState::File& b) {
  return a.symlink == b.symlink && a.bytes == b.bytes && (a.symlink || a.mode == b.mode);
}

bool PutBack(const std::string& path, const OwnedState::File& file) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) fs::remove_all(path, ec);
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (file.symlink) {
    fs::remove(path, ec);
    return ::symlink(file.bytes.c_str(), path.c_str()) == 0;
  }
  std::string err;
  ReplaceOptions options;
  options.mode = file.mode;
  return ReplaceFile(path, file.bytes, &err, options);
}

}  // namespace

std::string OwnedState::Shown(const std::string& path) const {
  return !workdir_.empty() && path.rfind(workdir_, 0) == 0 ? path.substr(workdir_.size()) : path;
}

bool OwnedState::ScanFiles(std::map<std::string, std::pair<std::string, File>>* out,
                           std::string* err) const {
  out->clear();
  auto add = [&](const std::string& path) {
    File file;
    if (ReadEntry(path, &file)) (*out)[Shown(path)] = {path, std::move(file)};
  };
  add(git_dir_ + "HEAD");
  add(git_dir_ + "config.worktree");
  add(common_dir_ + "config");
  for (const char* dir : {"hooks", "info"}) {
    const std::string top = common_dir_ + dir;
    std::error_code ec;
    fs::file_status status = fs::symlink_status(top, ec);
    if (!fs::exists(status)) continue;
    if (!fs::is_directory(status)) {
      add(top);  // a link or file where the folder was: a change
      continue;
    }
    for (fs::recursive_directory_iterator it(top, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string path = it->path().string();
      // What `git gc` and `git update-server-info` write for dumb HTTP
      // clients: git never reads it, and a user's gc must not count.
      if (path == common_dir_ + "info/refs" || path == common_dir_ + "info/packs") continue;
      if (!it->is_directory(ec) || it->is_symlink(ec)) add(path);
    }
    if (ec) {
      *err = "cannot list " + top + ": " + ec.message();
      return false;
    }
  }
  return true;
}

bool OwnedState::ScanRefs(git_repository* repo, Refs* out, std::string* err) const {
  out->clear();
  git_reference_iterator* raw = nullptr;
  if (git_reference_iterator_new(&raw, repo) != 0)
    return git::Fail("cannot list the repository's refs", err);
  std::unique_ptr<git_reference_iterator,
                  git::Free<git_reference_iterator, git_reference_iterator_free>>
      it(raw);
  git_reference* ref = nullptr;
  int rc = 0;
  while ((rc = git_reference_next(&ref, raw)) == 0) {
    git::RefPtr hold(ref);
    const std::string name = git_reference_name(ref);
    if (name != branch_ref_ && name.rfind(kOwnedRefs, 0) != 0) continue;
    RefTarget& at = (*out)[name];
    if (const git_oid* target = git_reference_target(ref))
      at.sha = git::Hex(*target);
    else
      at.symbolic = git_reference_symbolic_target(ref);
  }
  if (rc != GIT_ITEROVER) return git::Fail("cannot list the repository's refs", err);
  return true;
}

bool OwnedState::Capture(git_repository* repo, const std::string& branch, std::string* err) {
  git_dir_ = git_repository_path(repo);
  common_dir_ = git_repository_commondir(repo);
  const char* workdir = git_repository_workdir(repo);
  workdir_ = workdir ? workdir : "";
  if (!WithSlash(&git_dir_) || !WithSlash(&common_dir_)) {
    *err = "the repository has no git folder";
    return false;
  }
  branch_ref_ = "refs/heads/" + branch;
  if (!ScanFiles(&files_, err) || !ScanRefs(repo, &refs_, err)) return false;
  captured_ = true;
  return true;
}

void OwnedState::Expect(const std::string& ref, const std::string& sha) {
  if (captured_ && (ref == branch_ref_ || ref.rfind(kOwnedRefs, 0) == 0)) refs_[ref] = {sha, ""};
}

void OwnedState::RereadHead() {
  if (!captured_) return;
  auto head = files_.find(Shown(git_dir_ + "HEAD"));
  if (head != files_.end()) ReadEntry(head->second.first, &head->second.second);
}

bool OwnedState::CheckAndRestore(git_repository* repo, std::vector<std::string>* changes,
                                 std::string* err) {
  changes->clear();
  if (!captured_) return true;
  std::map<std::string, std::pair<std::string, File>> files;
  if (!ScanFiles(&files, err)) return false;
  // What appeared goes first: a link put where a folder was must be gone
  // before that folder's files are put back.
  for (const auto& [shown, entry] : files) {
    if (files_.count(shown)) continue;
    std::error_code ec;
    fs::remove_all(entry.first, ec);
    changes->push_back(shown + " added" + (ec ? " (could not be removed)" : " (removed)"));
  }
  for (const auto& [shown, entry] : files_) {
    auto now = files.find(shown);
    if (now != files.end() && Same(now->second.second, entry.second)) continue;
    const bool restored = PutBack(entry.first, entry.second);
    changes->push_back(shown + (now == files.end() ? " deleted" : " changed") +
                       (restored ? " (put back)" : " (could not be put back)"));
  }

  Refs refs;
  if (!ScanRefs(repo, &refs, err)) return false;
  for (const auto& [name, target] : refs) {
    if (refs_.count(name)) continue;
    const bool removed = git_reference_remove(repo, name.c_str()) == 0;
    changes->push_back(name + " added" + (removed ? " (removed)" : " (could not be removed)"));
  }
  // Only refs that differ are looked at further: checking every tried
  // commit's object after every step would cost a lookup per experiment so
  // far (a commit deleted from the object store behind an intact ref is
  // what `ratchet audit` finds: it checks every tried commit is there).
  std::vector<std::string> lost;
  for (const auto& [name, expected] : refs_) {
    auto now = refs.find(name);
    if (now != refs.end() && now->second == expected) continue;
    const std::string& sha = expected.sha;
    git_oid oid;
    if (git_oid_fromstr(&oid, sha.c_str()) != 0) continue;  // was symbolic at Capture
    git_odb* raw_odb = nullptr;
    if (git_repository_odb(&raw_odb, repo) != 0) return git::Fail("cannot open git's objects", err);
    const bool exists = git_odb_exists(raw_odb, &oid) == 1;
    git_odb_free(raw_odb);
    git_reference* made = nullptr;
    const bool restored = exists && git_reference_create(&made, repo, name.c_str(), &oid, 1,
                                                         "ratchet: put back") == 0;
    git_reference_free(made);
    std::string what = now == refs.end() ? " deleted"
                       : !now->second.symbolic.empty()
                           ? " made symbolic"
                           : " moved to " + git::ShortSha(now->second.sha);
    changes->push_back(
        name + what +
        (restored ? " (put back)"
         : exists ? " (could not be put back)"
                  : " (could not be put back: commit " + git::ShortSha(sha) + " is gone)"));
    if (!restored) lost.push_back(name);
  }
  // Said once: what cannot be undone is not expected any more.
  for (const std::string& name : lost) refs_.erase(name);
  return true;
}

}  // namespace ratchet
