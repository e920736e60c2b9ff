#include "propose/state_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "base/durable_file.h"

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

bool Pinned(const std::string& rel) {
  return rel == ".ratchet/ledger.db" || rel == ".ratchet/ledger.db-wal" ||
         rel == ".ratchet/ledger.db-shm" || rel == ".ratchet/lock";
}

bool ReadAll(const std::string& path, std::string* content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *content = s.str();
  return !in.bad();
}

// ratchet's own SQLite connection holds POSIX record locks on the ledger
// files, and closing *any* descriptor of a file drops every such lock the
// process holds on it: SQLite would then believe no one else has the ledger
// open (and, say, let another process checkpoint and delete its log). So a
// held-open file is opened here once and its descriptor never closed.
int HeldFd(const std::string& path, uint64_t dev, uint64_t ino) {
  static std::mutex mu;
  static std::map<std::pair<uint64_t, uint64_t>, int> fds;
  std::lock_guard<std::mutex> lock(mu);
  auto it = fds.find({dev, ino});
  if (it != fds.end()) return it->second;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0) return -1;  // kept open: see above
  fds[{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}] = fd;
  return st.st_dev == dev && st.st_ino == ino ? fd : -1;
}

bool ReadFd(int fd, std::string* content) {
  content->clear();
  char buf[1 << 16];
  off_t at = 0;
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    content->append(buf, static_cast<size_t>(n));
    at += n;
  }
}

// Writes `content` into the held-open file itself, not a replacement, so
// every open handle on it (SQLite's) sees the restored bytes.
bool WriteInPlace(int fd, const std::string& content, unsigned mode) {
  if (fd < 0) return false;
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n =
        ::pwrite(fd, content.data() + done, content.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return ::ftruncate(fd, static_cast<off_t>(content.size())) == 0 &&
         ::fchmod(fd, mode & 07777) == 0 && ::fsync(fd) == 0;
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

std::string GuardReport::Describe() const {
  auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size() && i < 5; ++i) out += (i ? ", " : "") + items[i];
    if (items.size() > 5) out += " and " + std::to_string(items.size() - 5) + " more";
    return out;
  };
  if (changed.empty()) return "";
  std::string out = "changed " + list(changed);
  if (fatal) return out + "; " + detail;
  if (not_restored.empty()) return out + " (put back)";
  if (not_restored.size() == changed.size()) return out + " (could not be undone)";
  return out + " (put back, except " + list(not_restored) + ")";
}

StateGuard::~StateGuard() { DropAsideLinks(); }

bool StateGuard::Guarded(const std::string& rel) const {
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

bool StateGuard::Scan(std::map<std::string, Entry>* out, bool with_content,
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
    e.pinned = Pinned(rel);
    e.restore_only = rel == ".ratchet/ledger.db-shm";
    if (S_ISDIR(st.st_mode)) return true;  // folders are implied by their files
    if (S_ISLNK(st.st_mode)) {
      e.kind = Entry::Kind::kSymlink;
      std::error_code ec;
      e.link_target = fs::read_symlink(path, ec).string();
    } else if (S_ISREG(st.st_mode)) {
      e.kind = Entry::Kind::kFile;
      e.watch_only = !e.pinned && (IsUnder(rel, ".ratchet/runs") || e.size > kMaxKeptBytes);
      if (with_content && !e.watch_only) {
        std::string content;
        bool read =
            e.pinned ? ReadFd(HeldFd(path, e.dev, e.ino), &content) : ReadAll(path, &content);
        if (!read) {
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

bool StateGuard::Capture(const std::string& root, const std::vector<std::string>& skip,
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
    if (!e.pinned || e.kind != Entry::Kind::kFile) continue;
    if (!made_dir) {
      fs::create_directories(aside_dir, ec);
      made_dir = true;
    }
    std::string aside = aside_dir + "/" + fs::path(rel).filename().string();
    if (::link((root_ + "/" + rel).c_str(), aside.c_str()) == 0) aside_[rel] = aside;
  }
  return true;
}

void StateGuard::DropAsideLinks() {
  for (const auto& [rel, aside] : aside_) ::unlink(aside.c_str());
  aside_.clear();
  if (!root_.empty()) ::rmdir((root_ + "/" + kAsideDir).c_str());
}

void StateGuard::Restore(const std::string& rel, const Entry& before, const Entry* now,
                         GuardReport* report) {
  const std::string path = root_ + "/" + rel;
  if (before.pinned && before.kind == Entry::Kind::kFile) {
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
        // Leave the last known bytes at the path, so the ledger can be read.
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
        !WriteInPlace(HeldFd(path, before.dev, before.ino), *before.content, before.mode)) {
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

GuardReport StateGuard::CheckAndRestore() {
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
  bool ledger_restored = false;
  for (const auto& [rel, before] : before_) {
    auto it = now.find(rel);
    const Entry* cur = it == now.end() ? nullptr : &it->second;
    if (before.restore_only) {
      // Readers change its bytes; only a deleted or replaced file counts.
      if (cur && cur->ino == before.ino && cur->dev == before.dev) continue;
      report.changed.push_back(rel);
      Restore(rel, before, cur, &report);
      ledger_restored = true;
      continue;
    }
    bool differs = !cur || cur->kind != before.kind || cur->mode != before.mode;
    if (!differs && before.pinned) differs = cur->ino != before.ino || cur->dev != before.dev;
    if (!differs && before.kind == Entry::Kind::kSymlink)
      differs = cur->link_target != before.link_target;
    if (!differs && before.kind == Entry::Kind::kFile) {
      if (before.content) {
        // Bytes, not times: a time can be set back.
        std::string content;
        const std::string path = root_ + "/" + rel;
        bool read = before.pinned ? ReadFd(HeldFd(path, before.dev, before.ino), &content)
                                  : ReadAll(path, &content);
        differs = cur->size != before.size || !read || content != *before.content;
      } else {
        differs =
            cur->size != before.size || cur->mtime_ns != before.mtime_ns || cur->ino != before.ino;
      }
    }
    if (!differs) continue;
    report.changed.push_back(rel);
    Restore(rel, before, cur, &report);
    if (before.pinned && rel != ".ratchet/lock") ledger_restored = true;
  }
  for (const auto& [rel, entry] : now) {
    if (before_.count(rel)) continue;
    report.changed.push_back(rel);  // appeared: remove it
    RemoveAny(root_ + "/" + rel);
  }
  if (ledger_restored) {
    // SQLite's shared-memory index must match the restored log, so it goes
    // back to its state at Capture too (its bytes are not compared: readers
    // write it).
    auto shm = before_.find(".ratchet/ledger.db-shm");
    if (shm != before_.end() && std::find(report.changed.begin(), report.changed.end(),
                                          shm->first) == report.changed.end()) {
      auto cur = now.find(shm->first);
      Restore(shm->first, shm->second, cur == now.end() ? nullptr : &cur->second, &report);
    }
  }
  DropAsideLinks();
  std::sort(report.changed.begin(), report.changed.end());
  std::sort(report.not_restored.begin(), report.not_restored.end());
  return report;
}

}  // namespace ratchet
