#include "store/ledger_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <utility>

namespace ratchet {
namespace {

const char* const kShm = ".ratchet/ledger.db-shm";

// ratchet's own SQLite connection holds POSIX record locks on the ledger
// files, and closing *any* descriptor of a file drops every such lock the
// process holds on it: SQLite would then believe no one else has the ledger
// open (and, say, let another process checkpoint and delete its log). So a
// held file is opened here once and its descriptor never closed.
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

}  // namespace

bool LedgerFiles::Held(const std::string& rel) const {
  return rel == ".ratchet/ledger.db" || rel == ".ratchet/ledger.db-wal" || rel == kShm ||
         rel == ".ratchet/lock";
}

bool LedgerFiles::WrittenByReaders(const std::string& rel) const { return rel == kShm; }

std::string LedgerFiles::RestoredWith(const std::string& rel) const {
  if (rel == ".ratchet/ledger.db" || rel == ".ratchet/ledger.db-wal") return kShm;
  return "";
}

bool LedgerFiles::Read(const std::string& path, uint64_t dev, uint64_t ino, std::string* content) {
  int fd = HeldFd(path, dev, ino);
  if (fd < 0) return false;
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

bool LedgerFiles::WriteInPlace(const std::string& path, uint64_t dev, uint64_t ino,
                               const std::string& content, unsigned mode) {
  int fd = HeldFd(path, dev, ino);
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

}  // namespace ratchet
