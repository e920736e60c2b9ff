#include "base/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace ratchet {
namespace {

bool Fail(const std::string& what, int error, std::string* err) {
  *err = what + ": " + std::strerror(error);
  return false;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Unique among this process's threads and among processes (the pid), so two
// writers of one path never share a temporary file.
std::string TemporaryName(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

}  // namespace

bool ReplaceFile(const std::string& path, std::string_view content, std::string* err,
                 const ReplaceOptions& options) {
  const std::string tmp = TemporaryName(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return Fail("cannot create " + tmp, errno, err);
  struct stat old;
  std::optional<unsigned> mode = options.mode;
  if (!mode && ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) mode = old.st_mode;
  bool ok = WriteAll(fd, content);
  if (ok && mode) ok = ::fchmod(fd, *mode & 07777) == 0;
  // The data is on disk before the name points at it.
  if (ok && options.durable) ok = ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
    return Fail("cannot replace " + path, error, err);
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return Fail("cannot write " + path, error, err);
  }
  if (options.durable) {
    // The rename itself survives a crash once the directory is synced.
    int dir = ::open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }
  return true;
}

}  // namespace ratchet
