#include "exec/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace ratchet {
namespace {

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string ReadPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string s = ReadAll(fd);
  close(fd);
  return s;
}

std::string ReadAt(int dir, const char* name) {
  int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string s = ReadAll(fd);
  close(fd);
  return s;
}

// Writes one value to a cgroup file; errno tells why not.
bool WriteAt(int dir, const char* name, const std::string& value) {
  int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n;
  do {
    n = write(fd, value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  errno = e;
  return n == static_cast<ssize_t>(value.size());
}

bool WritePath(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = write(fd, value.data(), value.size());
  int e = errno;
  close(fd);
  errno = e;
  return n == static_cast<ssize_t>(value.size());
}

// The number after "key " on a line of a "key value" file (cpu.stat,
// memory.events, ...); false if the key is absent.
bool KeyValue(const std::string& text, std::string_view key, uint64_t* value) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      *value = std::strtoull(std::string(line.substr(key.size() + 1)).c_str(), nullptr, 10);
      return true;
    }
    pos = end + 1;
  }
  return false;
}

std::string Unescape(std::string_view s) {
  // mountinfo writes space, tab, newline and backslash as \ooo.
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        if (s[i + k] < '0' || s[i + k] > '7') {
          ok = false;
          break;
        }
        v = v * 8 + (s[i + k] - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (;;) {
    size_t end = s.find(sep, pos);
    out.push_back(s.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) return out;
    pos = end + 1;
  }
}

bool ProcessGone(long pid) { return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Removes the ratchet-<pid> folders (and their empty step folders) of
// ratchet processes that no longer exist. rmdir only removes empty cgroups,
// so a folder that still holds a process stays.
void SweepStale(const std::string& base) {
  DIR* d = opendir(base.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (!name.starts_with("ratchet-")) continue;
    char* end = nullptr;
    long pid = std::strtol(e->d_name + 8, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == getpid() || !ProcessGone(pid)) continue;
    stale.push_back(base + "/" + e->d_name);
  }
  closedir(d);
  for (const std::string& dir : stale) {
    if (DIR* sd = opendir(dir.c_str())) {
      std::vector<std::string> steps;
      while (dirent* e = readdir(sd)) {
        if (std::string_view(e->d_name).starts_with("step-"))
          steps.push_back(dir + "/" + e->d_name);
      }
      closedir(sd);
      for (const std::string& s : steps) rmdir(s.c_str());
    }
    rmdir(dir.c_str());
  }
}

// mkdir -p of the ratchet-<pid> folder under `base`; "" and *why on failure.
std::string MakeOwnFolder(const std::string& base, std::string* why) {
  SweepStale(base);
  std::string dir = base + "/ratchet-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *why = ErrnoText("cannot create the cgroup " + dir);
    return "";
  }
  return dir;
}

CgroupPlaces Probe() {
  CgroupPlaces p;
  std::string mountinfo = ReadPath("/proc/self/mountinfo");
  std::string own = ReadPath("/proc/self/cgroup");
  std::vector<CgroupMount> mounts = ParseCgroupMounts(mountinfo);

  const CgroupMount* v2 = nullptr;
  for (const CgroupMount& m : mounts)
    if (m.v2 && !v2) v2 = &m;
  std::string path;
  if (!v2) {
    p.why_not_v2 = "no cgroup2 file system is mounted";
  } else if (!FindProcCgroup(own, "", &path)) {
    p.why_not_v2 = "this process is in no cgroup2 cgroup (/proc/self/cgroup)";
  } else if (std::string base = CgroupFolder(*v2, path); base.empty()) {
    p.why_not_v2 =
        "this process's cgroup " + path + " is outside the cgroup2 mount at " + v2->point;
  } else if (access((base + "/cgroup.procs").c_str(), W_OK) != 0) {
    // Moving a process needs write access to the cgroup.procs of the common
    // ancestor of where it is and where it goes: ratchet's own cgroup.
    p.why_not_v2 = ErrnoText("cannot move processes out of " + base + " (cgroup.procs)");
  } else if (std::string dir = MakeOwnFolder(base, &p.why_not_v2); !dir.empty()) {
    p.v2 = dir;
    std::string controllers = ReadPath(dir + "/cgroup.controllers");
    for (std::string_view c : Split(controllers.substr(0, controllers.find('\n')), ' ')) {
      if (c == "memory") p.v2_memory = WritePath(dir + "/cgroup.subtree_control", "+memory");
      if (c == "pids") p.v2_pids = WritePath(dir + "/cgroup.subtree_control", "+pids");
    }
  }

  auto v1 = [&](const std::string& controller, std::string* out, std::string* why) {
    const CgroupMount* mount = nullptr;
    for (const CgroupMount& m : mounts) {
      for (const std::string& c : m.controllers)
        if (!m.v2 && c == controller && !mount) mount = &m;
    }
    std::string own_path;
    if (!mount) {
      *why = "no v1 " + controller + " hierarchy is mounted";
    } else if (!FindProcCgroup(own, controller, &own_path)) {
      *why = "this process is in no v1 " + controller + " cgroup";
    } else if (std::string base = CgroupFolder(*mount, own_path); base.empty()) {
      *why = "this process's " + controller + " cgroup is outside its mount";
    } else {
      *out = MakeOwnFolder(base, why);
    }
  };
  if (!p.v2_memory) v1("memory", &p.v1_memory, &p.why_not_v1_memory);
  if (!p.v2_pids) v1("pids", &p.v1_pids, &p.why_not_v1_pids);
  return p;
}

std::mutex probe_mu;
CgroupPlaces* probed = nullptr;  // never freed: usable during exit
pid_t probed_pid = 0;

// At exit, the process's own folders go (they are empty once every step is).
void RemoveOwnFolders() {
  std::lock_guard<std::mutex> lock(probe_mu);
  if (!probed || probed_pid != getpid()) return;
  for (const std::string* dir : {&probed->v2, &probed->v1_memory, &probed->v1_pids}) {
    if (!dir->empty()) rmdir(dir->c_str());
  }
}

std::atomic<uint64_t> step_counter{0};

}  // namespace

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> out;
  for (std::string_view line : Split(mountinfo, '\n')) {
    // id parent dev root point options [optional...] - fstype source superoptions
    std::vector<std::string_view> f = Split(line, ' ');
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 1 >= f.size()) continue;
    std::string_view fstype = f[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m;
    m.root = Unescape(f[3]);
    m.point = Unescape(f[4]);
    m.v2 = fstype == "cgroup2";
    if (!m.v2 && dash + 3 < f.size()) {
      for (std::string_view opt : Split(f[dash + 3], ',')) {
        if (opt != "rw" && opt != "ro" && !opt.starts_with("name=") && opt.find('=') == opt.npos &&
            opt != "clone_children" && opt != "noprefix" && opt != "xattr" &&
            opt != "cpuset_v2_mode" && opt != "favordynmods")
          m.controllers.emplace_back(opt);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

bool FindProcCgroup(std::string_view proc_cgroup, const std::string& controller,
                    std::string* path) {
  for (std::string_view line : Split(proc_cgroup, '\n')) {
    size_t a = line.find(':');
    size_t b = a == line.npos ? line.npos : line.find(':', a + 1);
    if (b == line.npos) continue;
    std::string_view id = line.substr(0, a), list = line.substr(a + 1, b - a - 1);
    std::string_view where = line.substr(b + 1);
    bool match = false;
    if (controller.empty()) {
      match = id == "0" && list.empty();
    } else {
      for (std::string_view c : Split(list, ','))
        if (c == controller) match = true;
    }
    if (match) {
      *path = std::string(where);
      return true;
    }
  }
  return false;
}

std::string CgroupFolder(const CgroupMount& mount, const std::string& path) {
  std::string rel;
  if (mount.root == "/") {
    rel = path;
  } else if (path == mount.root) {
    rel = "/";
  } else if (path.starts_with(mount.root + "/")) {
    rel = path.substr(mount.root.size());
  } else {
    return "";
  }
  if (rel == "/") return mount.point;
  return mount.point + rel;
}

const CgroupPlaces& ProbeCgroupPlaces() {
  std::lock_guard<std::mutex> lock(probe_mu);
  // A forked child (a test's stand-in ratchet) gets folders of its own.
  if (!probed || probed_pid != getpid()) {
    bool first = !probed;
    if (!probed) probed = new CgroupPlaces();
    *probed = Probe();
    probed_pid = getpid();
    if (first) atexit(RemoveOwnFolders);
  }
  return *probed;
}

void StepCgroup::Create(const CgroupPlaces& places, const StepLimits& limits, std::string* notes) {
  std::string name = "step-" + std::to_string(++step_counter);
  auto note = [&](const std::string& s) {
    if (!notes->empty()) *notes += "; ";
    *notes += s;
  };
  // Opens a new cgroup folder `parent/name`; the parent is made again if a
  // sweeper (another ratchet seeing a reused pid) removed it.
  auto make = [&](const std::string& parent, std::string* dir, UniqueFd* fd) {
    *dir = parent + "/" + name;
    int r = mkdir(dir->c_str(), 0755);
    if (r != 0 && errno == ENOENT && mkdir(parent.c_str(), 0755) == 0)
      r = mkdir(dir->c_str(), 0755);
    if (r != 0) {
      note(ErrnoText("cannot create the cgroup " + *dir));
      dir->clear();
      return false;
    }
    fd->Reset(open(dir->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd->valid()) {
      note(ErrnoText("cannot open the cgroup " + *dir));
      rmdir(dir->c_str());
      dir->clear();
      return false;
    }
    return true;
  };
  auto join = [&](int dir, const std::string& path) {
    int fd = openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      note(ErrnoText("cannot open " + path + "/cgroup.procs"));
      return false;
    }
    procs_.emplace_back(fd);
    procs_fds_.push_back(fd);
    return true;
  };

  if (!places.v2.empty() && make(places.v2, &v2_dir_, &v2_)) {
    if (faccessat(v2_.get(), "cgroup.kill", W_OK, 0) != 0) {
      note("this kernel's cgroups cannot kill (cgroup.kill needs Linux 5.14)");
    } else if (join(v2_.get(), v2_dir_)) {
      events_.Reset(openat(v2_.get(), "cgroup.events", O_RDONLY | O_CLOEXEC));
    }
    if (!events_.valid()) {
      procs_.clear();
      procs_fds_.clear();
      v2_.Reset();
      rmdir(v2_dir_.c_str());
      v2_dir_.clear();
    } else {
      v2_memory_ = places.v2_memory;
      v2_pids_ = places.v2_pids;
    }
  }
  if (limits.memory_bytes && v2_memory_) {
    std::string bytes = std::to_string(limits.memory_bytes);
    memory_limited_ = WriteAt(v2_.get(), "memory.max", bytes);
    if (!memory_limited_) note(ErrnoText("cannot set memory.max in " + v2_dir_));
    WriteAt(v2_.get(), "memory.swap.max", "0");  // absent without swap accounting
    // One OOM kill takes the whole step, as the v1 path does by ratchet's hand.
    WriteAt(v2_.get(), "memory.oom.group", "1");
  }
  if (limits.pids && v2_pids_) {
    pids_limited_ = WriteAt(v2_.get(), "pids.max", std::to_string(limits.pids));
    if (!pids_limited_) note(ErrnoText("cannot set pids.max in " + v2_dir_));
  }
  if (limits.memory_bytes && !memory_limited_) {
    if (places.v1_memory.empty()) {
      note("no memory cgroup: " + places.why_not_v1_memory);
    } else if (make(places.v1_memory, &v1_memory_dir_, &v1_memory_)) {
      std::string bytes = std::to_string(limits.memory_bytes);
      memory_limited_ = WriteAt(v1_memory_.get(), "memory.limit_in_bytes", bytes) &&
                        join(v1_memory_.get(), v1_memory_dir_);
      if (!memory_limited_) note(ErrnoText("cannot limit memory in " + v1_memory_dir_));
      WriteAt(v1_memory_.get(), "memory.memsw.limit_in_bytes", bytes);  // absent without swap
    }
  }
  if (limits.pids && !pids_limited_) {
    if (places.v1_pids.empty()) {
      note("no pids cgroup: " + places.why_not_v1_pids);
    } else if (make(places.v1_pids, &v1_pids_dir_, &v1_pids_)) {
      pids_limited_ = WriteAt(v1_pids_.get(), "pids.max", std::to_string(limits.pids)) &&
                      join(v1_pids_.get(), v1_pids_dir_);
      if (!pids_limited_) note(ErrnoText("cannot limit processes in " + v1_pids_dir_));
    }
  }
}

bool StepCgroup::Kill() { return v2_.valid() && WriteAt(v2_.get(), "cgroup.kill", "1"); }

bool StepCgroup::Populated() {
  if (!events_.valid()) return false;
  char buf[256];
  ssize_t n = pread(events_.get(), buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = '\0';
  uint64_t populated = 0;
  return KeyValue(buf, "populated", &populated) && populated != 0;
}

uint64_t StepCgroup::OomKills() {
  uint64_t kills = 0, v = 0;
  if (v2_memory_ && KeyValue(ReadAt(v2_.get(), "memory.events"), "oom_kill", &v)) kills += v;
  if (v1_memory_.valid() &&
      KeyValue(ReadAt(v1_memory_.get(), "memory.oom_control"), "oom_kill", &v))
    kills += v;
  return kills;
}

uint64_t StepCgroup::PidsMaxHits() {
  uint64_t hits = 0, v = 0;
  if (v2_pids_ && KeyValue(ReadAt(v2_.get(), "pids.events"), "max", &v)) hits += v;
  if (v1_pids_.valid() && KeyValue(ReadAt(v1_pids_.get(), "pids.events"), "max", &v)) hits += v;
  return hits;
}

bool StepCgroup::CpuSeconds(double* seconds) {
  uint64_t usec = 0;
  if (!v2_.valid() || !KeyValue(ReadAt(v2_.get(), "cpu.stat"), "usage_usec", &usec)) return false;
  *seconds = static_cast<double>(usec) / 1e6;
  return true;
}

bool StepCgroup::PeakBytes(uint64_t* bytes) {
  std::string s;
  if (v2_memory_) s = ReadAt(v2_.get(), "memory.peak");
  if (s.empty() && v1_memory_.valid()) s = ReadAt(v1_memory_.get(), "memory.max_usage_in_bytes");
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  *bytes = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

bool StepCgroup::Remove() {
  bool all = true;
  for (std::string* dir : {&v2_dir_, &v1_memory_dir_, &v1_pids_dir_}) {
    if (dir->empty()) continue;
    // Processes that were just killed may take a moment to leave a v1
    // hierarchy after cgroup2 said the step is empty.
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {
      gone = rmdir(dir->c_str()) == 0 || errno == ENOENT;
      if (!gone && errno != EBUSY) break;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    all = all && gone;
    dir->clear();
  }
  procs_.clear();
  procs_fds_.clear();
  events_.Reset();
  v2_.Reset();
  v1_memory_.Reset();
  v1_pids_.Reset();
  return all;
}

}  // namespace ratchet
