#include "exec/proc_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace ratchet {
namespace {

// A tiny path builder: no snprintf, which is not async-signal-safe.
class PathBuf {
 public:
  PathBuf& Add(const char* s) {
    while (*s && len_ + 1 < sizeof buf_) buf_[len_++] = *s++;
    buf_[len_] = '\0';
    return *this;
  }
  PathBuf& Add(long n) {
    char digits[24];
    int k = 0;
    do {
      digits[k++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n > 0 && k < 23);
    while (k > 0 && len_ + 1 < sizeof buf_) buf_[len_++] = digits[--k];
    buf_[len_] = '\0';
    return *this;
  }
  const char* c_str() const { return buf_; }

 private:
  char buf_[96] = {};
  size_t len_ = 0;
};

int OpenRead(const char* path, int flags = 0) {
  for (;;) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    if (fd >= 0 || errno != EINTR) return fd;
  }
}

ssize_t ReadSome(int fd, char* buf, size_t n) {
  for (;;) {
    ssize_t r = read(fd, buf, n);
    if (r >= 0 || errno != EINTR) return r;
  }
}

// Reads a whole small file into buf (NUL-terminated); returns its length or -1.
ssize_t ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = OpenRead(path);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t r = ReadSome(fd, buf + len, cap - 1 - len);
    if (r <= 0) break;
    len += static_cast<size_t>(r);
  }
  close(fd);
  buf[len] = '\0';
  return static_cast<ssize_t>(len);
}

// Parses a decimal name like "1234"; -1 for anything else ("self", ".").
long ParsePid(const char* s) {
  if (*s == '\0') return -1;
  long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

// Calls fn(name) for each entry of a directory, via getdents64 into a stack buffer
// (opendir allocates). Returns false if the directory cannot be opened.
template <typename Fn>
bool ForEachEntry(const char* dir, Fn fn) {
  int fd = OpenRead(dir, O_DIRECTORY);
  if (fd < 0) return false;
  alignas(8) char buf[4096];
  for (;;) {
    ssize_t n = getdents64(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      if (!fn(d->d_name)) {
        close(fd);
        return true;
      }
    }
  }
  close(fd);
  return true;
}

class PidList {
 public:
  PidList(pid_t* out, int cap) : out_(out), cap_(cap) {}
  bool Contains(pid_t pid) const {
    for (int i = 0; i < n_; ++i)
      if (out_[i] == pid) return true;
    return false;
  }
  void Add(pid_t pid) {
    if (n_ < cap_)
      out_[n_++] = pid;
    else
      truncated_ = true;
  }
  int size() const { return n_; }
  pid_t at(int i) const { return out_[i]; }
  bool truncated() const { return truncated_; }

 private:
  pid_t* out_;
  int cap_;
  int n_ = 0;
  bool truncated_ = false;
};

// Appends the pids listed in /proc/<pid>/task/<tid>/children (space separated).
void AddChildrenOfThread(pid_t pid, long tid, PidList* list) {
  PathBuf path;
  path.Add("/proc/").Add(static_cast<long>(pid)).Add("/task/").Add(tid).Add("/children");
  int fd = OpenRead(path.c_str());
  if (fd < 0) return;
  char buf[1024];
  long cur = -1;  // a number may straddle two reads
  for (;;) {
    ssize_t n = ReadSome(fd, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c >= '0' && c <= '9') {
        cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      } else if (cur >= 0) {
        list->Add(static_cast<pid_t>(cur));
        cur = -1;
      }
    }
  }
  if (cur >= 0) list->Add(static_cast<pid_t>(cur));
  close(fd);
}

// A child belongs to the thread that forked it, so every thread's file is read.
void AddChildren(pid_t pid, PidList* list) {
  PathBuf dir;
  dir.Add("/proc/").Add(static_cast<long>(pid)).Add("/task");
  ForEachEntry(dir.c_str(), [&](const char* name) {
    long tid = ParsePid(name);
    if (tid > 0) AddChildrenOfThread(pid, tid, list);
    return true;
  });
}

// The parent pid from /proc/<pid>/stat: "pid (comm) state ppid ...". comm may
// hold spaces and parentheses, so parse after the last ')'.
long ReadParent(long pid) {
  PathBuf path;
  path.Add("/proc/").Add(pid).Add("/stat");
  char buf[1024];
  ssize_t n = ReadSmallFile(path.c_str(), buf, sizeof buf);
  if (n <= 0) return -1;
  const char* p = nullptr;
  for (ssize_t i = n - 1; i >= 0; --i) {
    if (buf[i] == ')') {
      p = buf + i + 1;
      break;
    }
  }
  if (!p) return -1;
  // p -> " S 1234 ..."
  while (*p == ' ') ++p;
  while (*p && *p != ' ') ++p;  // state
  while (*p == ' ') ++p;
  long v = 0;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
  return v;
}

// Fallback for kernels without CONFIG_PROC_CHILDREN: read every process's
// parent, adding those whose parent is root or already listed, until a pass adds
// nothing.
void ScanProc(pid_t root, PidList* list) {
  for (bool added = true; added && !list->truncated();) {
    added = false;
    ForEachEntry("/proc", [&](const char* name) {
      long pid = ParsePid(name);
      if (pid <= 0 || pid == root || list->Contains(static_cast<pid_t>(pid))) return true;
      long parent = ReadParent(pid);
      if (parent <= 0) return true;
      if (parent == root || list->Contains(static_cast<pid_t>(parent))) {
        list->Add(static_cast<pid_t>(pid));
        added = !list->truncated();
      }
      return !list->truncated();
    });
  }
}

bool HaveChildrenFiles() {
  // 0: unknown, 1: yes, 2: no. A lock-free atomic is fine in a forked child.
  static std::atomic<int> known{0};
  int k = known.load(std::memory_order_relaxed);
  if (k == 0) {
    k = access("/proc/thread-self/children", R_OK) == 0 ? 1 : 2;
    known.store(k, std::memory_order_relaxed);
  }
  return k == 1;
}

}  // namespace

int ListDescendants(pid_t root, pid_t* out, int cap, bool* truncated, ProcWalk walk) {
  PidList list(out, cap);
  if (walk == ProcWalk::kAuto && HaveChildrenFiles()) {
    AddChildren(root, &list);
    // Breadth first: the list is also the queue of processes to visit.
    for (int i = 0; i < list.size(); ++i) AddChildren(list.at(i), &list);
  } else {
    ScanProc(root, &list);
  }
  if (truncated) *truncated = list.truncated();
  return list.size();
}

pid_t ParentOf(pid_t pid) { return static_cast<pid_t>(ReadParent(pid)); }

bool ReadProcMemory(pid_t pid, ProcMemory* mem) {
  PathBuf path;
  path.Add("/proc/").Add(static_cast<long>(pid)).Add("/status");
  char buf[4096];
  if (ReadSmallFile(path.c_str(), buf, sizeof buf) <= 0) return false;
  auto field = [&](const char* key, uint64_t* value) {
    // Lines look like "VmRSS:\t   1234 kB".
    for (const char* line = buf; *line;) {
      const char* k = key;
      const char* p = line;
      while (*k && *p == *k) ++p, ++k;
      if (*k == '\0') {
        while (*p == ' ' || *p == '\t') ++p;
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + static_cast<uint64_t>(*p - '0');
        *value = v;
        return true;
      }
      while (*line && *line != '\n') ++line;
      if (*line) ++line;
    }
    return false;
  };
  ProcMemory m;
  // Zombies and kernel threads have no VmRSS line.
  if (!field("VmRSS:", &m.rss_kb)) return false;
  field("VmHWM:", &m.hwm_kb);
  *mem = m;
  return true;
}

}  // namespace ratchet
