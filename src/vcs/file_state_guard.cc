#include "vcs/file_state_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/durable_file.h"
#include "base/read_file.h"

namespace fs = std::filesystem;

namespace ratchet {
namespace {

// Beyond this, a file that ratchet does not hold open is compared by size,
// time and inode only.
constexpr uint64_t kMaxKeptBytes = 16ull << 20;
const char* const kAsideDir = ".ratchet/guard";

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool IsUnder(const std::string& rel, const std::string& dir) {
  return rel == dir || StartsWith(rel, dir + "/");
}

// Replaces whatever is at `path` with a new regular file.
bool WriteNew(const std::string& path, const std::string& content, unsigned mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (fs::is_directory(fs::symlink_status(path, ec))) fs::remove_all(path, ec);
  std::string err;
  ReplaceOptions options;
  options.mode = mode;
  return ReplaceFile(path, content, &err, options);
}

void RemoveAny(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace

StateGuardFactory FileStateGuard::Factory(HeldFiles* held) {
  return [held] { return std::make_unique<FileStateGuard>(held); };
}

FileStateGuard::~FileStateGuard() { DropAsideLinks(); }

bool FileStateGuard::Guarded(const std::string& rel) const {
  if (!IsUnder(rel, ".git") && !IsUnder(rel, ".ratchet")) return false;
  // Working copies and scratch homes are the experiments' own.
  for (const char* dir : {".git/objects", ".git/logs", ".git/lfs", kAsideDir, ".ratchet/work",
                          ".ratchet/homes", ".ratchet/audit"})
    if (IsUnder(rel, dir)) return false;
  if (IsUnder(rel, ".ratchet/runs") && rel.find("/home/") != std::string::npos) return false;
  // Submodules' repositories (.git/modules/<name>/objects, ...): content-
  // addressed objects again, possibly large.
  if (IsUnder(rel, ".git/modules") &&
      (rel.find("/objects/") != std::string::npos || rel.find("/logs/") != std::string::npos ||
       (rel.size() >= 8 && rel.compare(rel.size() - 8, 8, "/objects") == 0)))
    return false;
  for (const char* file : {".git/index", ".git/ORIG_HEAD", ".git/FETCH_HEAD", ".git/COMMIT_EDITMSG",
                           ".git/AUTO_MERGE"})
    if (rel == file) return false;
  if (StartsWith(rel, ".ratchet/live.json")) return false;
  return std::find(skip_.begin(), skip_.end(), rel) == skip_.end();
}

bool FileStateGuard::ReadEntry(const std::string& rel, const Entry& e, std::string* content) const {
  const std::string path = root_ + "/" + rel;
  return e.held ? held_->Read(path, e.dev, e.ino, content) : ReadWholeFile(path, content);
}

bool FileStateGuard::Scan(std::map<std::string, Entry>* out, bool with_content,
                          std::string* err) const {
  out->clear();
  auto add = [&](const fs::path& path) -> bool {
    std::string rel = fs::path(path).lexically_relative(root_).generic_string();
    if (!Guarded(rel)) return true;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return true;  // vanished meanwhile
    Entry e;
    e.dev = st.st_dev;
    e.ino = st.st_ino;
    e.size = static_cast<uint64_t>(st.st_size);
    e.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    e.mode = st.st_mode & 07777;
    e.held = held_ && held_->Held(rel);
    e.restore_only = e.held && held_->WrittenByReaders(rel);
    if (S_ISDIR(st.st_mode)) return true;  // folders are implied by their files
    if (S_ISLNK(st.st_mode)) {
      e.kind = Entry::Kind::kSymlink;
      std::error_code ec;
      e.link_target = fs::read_symlink(path, ec).string();
    } else if (S_ISREG(st.st_mode)) {
      e.kind = Entry::Kind::kFile;
      e.watch_only = !e.held && (IsUnder(rel, ".ratchet/runs") || e.size > kMaxKeptBytes);
      if (with_content && !e.watch_only) {
        std::string content;
        if (!ReadEntry(rel, e, &content)) {
          *err = "cannot read " + path.string() + ": " + std::strerror(errno);
          return false;
        }
        e.content = std::move(content);
      }
    } else {
      e.kind = Entry::Kind::kOther;
    }
    (*out)[rel] = std::move(e);
    return true;
  };
  for (const char* top : {".git", ".ratchet"}) {
    fs::path base = fs::path(root_) / top;
    std::error_code ec;
    fs::file_status status = fs::symlink_status(base, ec);
    if (ec || !fs::exists(status)) continue;
    if (!fs::is_directory(status)) {
      if (!add(base)) return false;
      continue;
    }
    for (fs::recursive_directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
      std::string rel = it->path().lexically_relative(root_).generic_string();
      if (it->is_directory(ec) && !it->is_symlink(ec) && !Guarded(rel)) {
        it.disable_recursion_pending();
        continue;
      }
      if (!add(it->path())) return false;
    }
    if (ec) {
      *err = "cannot list " + base.string() + ": " + ec.message();
      return false;
    }
  }
  return true;
}

bool FileStateGuard::Capture(const std::string& root, const std::vector<std::string>& skip,
                             std::string* err) {
  DropAsideLinks();
  root_ = fs::path(root).lexically_normal().string();
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  skip_ = skip;
  before_.clear();
  // Links left by a ratchet that died mid-run are stale: start afresh.
  const std::string aside_dir = root_ + "/" + kAsideDir;
  std::error_code ec;
  fs::remove_all(aside_dir, ec);
  if (!Scan(&before_, true, err)) return false;
  bool made_dir = false;
  for (const auto& [rel, e] : before_) {
    if (!e.held || e.kind != Entry::Kind::kFile) continue;
    if (!made_dir) {
      fs::create_directories(aside_dir, ec);
      made_dir = true;
    }
    std::string aside = aside_dir + "/" + fs::path(rel).filename().string();
    if (::link((root_ + "/" + rel).c_str(), aside.c_str()) == 0) aside_[rel] = aside;
  }
  return true;
}

void FileStateGuard::DropAsideLinks() {
  for (const auto& [rel, aside] : aside_) ::unlink(aside.c_str());
  aside_.clear();
  if (!root_.empty()) ::rmdir((root_ + "/" + kAsideDir).c_str());
}

void FileStateGuard::Restore(const std::string& rel, const Entry& before, const Entry* now,
                             GuardReport* report) {
  const std::string path = root_ + "/" + rel;
  if (before.held && before.kind == Entry::Kind::kFile) {
    if (!now || now->kind != Entry::Kind::kFile || now->ino != before.ino ||
        now->dev != before.dev) {
      // Deleted or replaced: put the very file ratchet has open back.
      auto it = aside_.find(rel);
      struct stat st;
      bool usable = it != aside_.end() && ::lstat(it->second.c_str(), &st) == 0 &&
                    st.st_ino == before.ino && st.st_dev == before.dev;
      if (!usable) {
        report->fatal = true;
        report->not_restored.push_back(rel);
        report->detail = rel +
                         " was deleted or replaced and ratchet's copy of it is gone; "
                         "ratchet cannot go on writing to it";
        // Leave the last known bytes at the path, so they can be read.
        if (before.content) WriteNew(path, *before.content, before.mode);
        return;
      }
      if (now) RemoveAny(path);
      fs::create_directories(fs::path(path).parent_path());
      if (::rename(it->second.c_str(), path.c_str()) != 0) {
        report->fatal = true;
        report->not_restored.push_back(rel);
        report->detail = "cannot put " + rel + " back: " + std::strerror(errno);
        return;
      }
      aside_.erase(it);
    }
    if (!before.content ||
        !held_->WriteInPlace(path, before.dev, before.ino, *before.content, before.mode)) {
      report->fatal = true;
      report->not_restored.push_back(rel);
      report->detail = "cannot restore the bytes of " + rel;
    }
    return;
  }
  if (before.watch_only) {
    report->not_restored.push_back(rel);
    return;
  }
  if (before.kind == Entry::Kind::kSymlink) {
    RemoveAny(path);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (::symlink(before.link_target.c_str(), path.c_str()) != 0)
      report->not_restored.push_back(rel);
    return;
  }
  if (before.kind == Entry::Kind::kFile && before.content) {
    if (!WriteNew(path, *before.content, before.mode)) report->not_restored.push_back(rel);
    return;
  }
  report->not_restored.push_back(rel);
}

GuardReport FileStateGuard::CheckAndRestore() {
  GuardReport report;
  std::map<std::string, Entry> now;
  std::string err;
  if (!Scan(&now, false, &err)) {
    report.changed.push_back(".ratchet");
    report.not_restored.push_back(".ratchet");
    report.fatal = true;
    report.detail = err;
    return report;
  }
  std::set<std::string> restore_too;  // held files that go back with a restored one
  for (const auto& [rel, before] : before_) {
    auto it = now.find(rel);
    const Entry* cur = it == now.end() ? nullptr : &it->second;
    if (before.restore_only) {
      // Readers change its bytes; only a deleted or replaced file counts.
      if (cur && cur->ino == before.ino && cur->dev == before.dev) continue;
      report.changed.push_back(rel);
      Restore(rel, before, cur, &report);
      continue;
    }
    bool differs = !cur || cur->kind != before.kind || cur->mode != before.mode;
    if (!differs && before.held) differs = cur->ino != before.ino || cur->dev != before.dev;
    if (!differs && before.kind == Entry::Kind::kSymlink)
      differs = cur->link_target != before.link_target;
    if (!differs && before.kind == Entry::Kind::kFile) {
      if (before.content) {
        // Bytes, not times: a time can be set back.
        std::string content;
        bool read = ReadEntry(rel, before, &content);
        differs = cur->size != before.size || !read || content != *before.content;
      } else {
        differs =
            cur->size != before.size || cur->mtime_ns != before.mtime_ns || cur->ino != before.ino;
      }
    }
    if (!differs) continue;
    report.changed.push_back(rel);
    Restore(rel, before, cur, &report);
    if (before.held) {
      std::string with = held_->RestoredWith(rel);
      if (!with.empty()) restore_too.insert(with);
    }
  }
  for (const auto& [rel, entry] : now) {
    if (before_.count(rel)) continue;
    report.changed.push_back(rel);  // appeared: remove it
    RemoveAny(root_ + "/" + rel);
  }
  // E.g. SQLite's shared-memory index must match a restored log, so it goes
  // back to its state at Capture too, although its bytes are not compared.
  for (const std::string& rel : restore_too) {
    auto before = before_.find(rel);
    if (before == before_.end() ||
        std::find(report.changed.begin(), report.changed.end(), rel) != report.changed.end())
      continue;
    auto cur = now.find(rel);
    Restore(rel, before->second, cur == now.end() ? nullptr : &cur->second, &report);
  }
  DropAsideLinks();
  std::sort(report.changed.begin(), report.changed.end());
  std::sort(report.not_restored.begin(), report.not_restored.end());
  return report;
}

}  // namespace ratchet
