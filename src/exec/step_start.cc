#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "exec/pidfd.h"
#include "exec/step.h"

extern char** environ;

// Step, from the spec to a running supervisor: checks, the command line
// (sandboxed or not), pipes, the cgroup, and the plan (see step.h).
namespace ratchet {
namespace {

using Clock = Step::Clock;
using Seconds = std::chrono::duration<double>;

// The first memory sample (see Step::Sample).
constexpr auto kFirstSample = std::chrono::milliseconds(10);

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// A descriptor that is never 0-2 (ratchet may have been started with those
// closed; the command's dup2 onto 0-2 must not clobber them).
int AboveStdio(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

bool MakePipe(UniqueFd* read_end, UniqueFd* write_end, std::string* err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *err = ErrnoText("pipe");
    return false;
  }
  read_end->Reset(AboveStdio(fds[0]));
  write_end->Reset(AboveStdio(fds[1]));
  if (!read_end->valid() || !write_end->valid()) {
    *err = ErrnoText("pipe");
    return false;
  }
  return true;
}

void SetNonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The signals this process ignores, from the SigIgn line of
// /proc/self/status; all ones if it cannot be read (then all are reset).
uint64_t IgnoredSignals() {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ~0ull;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return ~0ull;
  buf[n] = '\0';
  const char* line = std::strstr(buf, "\nSigIgn:");
  if (!line) return ~0ull;
  char* end = nullptr;
  unsigned long long mask = std::strtoull(line + 8, &end, 16);
  return end == line + 8 ? ~0ull : mask;
}

const char* ContainmentName(bool cgroup, bool pid_namespace) {
  return cgroup ? "cgroup" : pid_namespace ? "pid namespace" : "supervisor";
}

}  // namespace

bool Step::Start() {
  start_ = Clock::now();
  if (!Prepare() || !Launch()) {
    Fail();
    return false;
  }
  return true;
}

void Step::Fail() {
  result_.end = RunResult::End::kFailedToStart;
  result_.wall_s = Seconds(Clock::now() - start_).count();
  result_.containment = ContainmentName(cgroup_.contained(), sandboxed_);
  cgroup_.Remove();
  done_ = true;
}

bool Step::Prepare() {
  std::string* err = &result_.error;
  if (spec_.argv.empty()) {
    *err = "cannot run an empty command";
    return false;
  }
  std::set<int> targets;
  for (const auto& [child, parent] : spec_.fds) {
    if (child < 0 || !targets.insert(child).second) {
      *err = "cannot run '" + spec_.argv[0] + "': descriptor " + std::to_string(child) +
             " is given twice or is negative";
      return false;
    }
    if (parent < 0 || fcntl(parent, F_GETFD) < 0) {
      *err = "cannot run '" + spec_.argv[0] + "': descriptor " + std::to_string(parent) +
             " (to become " + std::to_string(child) + ") is not open";
      return false;
    }
  }
  if (spec_.fds.size() + 1 > static_cast<size_t>(kMaxPlanFds)) {
    *err = "cannot run '" + spec_.argv[0] + "': more than " + std::to_string(kMaxPlanFds - 1) +
           " descriptors to pass";
    return false;
  }
  fds_ = spec_.fds;

  sandboxed_ = spec_.sandbox.enabled;
  std::vector<std::pair<std::string, std::string>> add = spec_.env;
  // The sandbox's HOME, whatever the caller's environment said.
  if (sandboxed_) add.push_back({"HOME", kSandboxHome});
  std::vector<std::string> env = MergeEnvironment(environ, add, spec_.drop_secret_env);
  std::string path_env;
  FindEnv(env, "PATH", &path_env);

  std::vector<std::string> argv;
  if (sandboxed_) {
    if (!PrepareSandbox(&argv, path_env)) return false;
  } else {
    if (!spec_.cwd.empty()) {
      struct stat st;
      int e = stat(spec_.cwd.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
      if (e != 0) {
        *err = "cannot run '" + spec_.argv[0] + "': working directory '" + spec_.cwd +
               "': " + std::strerror(e);
        return false;
      }
    }
    if (!FindProgram(spec_.argv[0], path_env, spec_.cwd, &program_, err)) return false;
    argv = spec_.argv;
    if (!spec_.readonly_paths.empty() && !context_.legacy_bwrap.empty()) {
      argv =
          BwrapArgv(context_.legacy_bwrap, spec_.readonly_paths, spec_.cwd, program_, spec_.argv);
      if (!FindProgram(argv[0], path_env, spec_.cwd, &program_, err)) return false;
      result_.sandboxed = true;
    }
    cwd_ = spec_.cwd;
  }
  argv_ = std::make_unique<CStringArray>(std::move(argv));
  envp_ = std::make_unique<CStringArray>(std::move(env));

  if (!spec_.log_path.empty()) {
    log_.Reset(
        AboveStdio(open(spec_.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)));
    if (!log_.valid()) {
      *err = ErrnoText("cannot open the log '" + spec_.log_path + "'");
      return false;
    }
  }
  if (!MakePipe(&out_r_, &out_w_, err) || !MakePipe(&status_r_, &status_w_, err) ||
      !MakePipe(&control_r_, &control_w_, err)) {
    return false;
  }
  if (spec_.stdin_data) {
    if (!MakePipe(&in_r_, &in_w_, err)) return false;
    SetNonblocking(in_w_.get());
  } else {
    in_r_.Reset(AboveStdio(open("/dev/null", O_RDONLY | O_CLOEXEC)));
    if (!in_r_.valid()) {
      *err = ErrnoText("/dev/null");
      return false;
    }
  }
  SetNonblocking(out_r_.get());

  if (context_.cgroups) cgroup_.Create(ProbeCgroupPlaces(), spec_.limits, &notes_);
  if (spec_.limits.pids && !cgroup_.pids_limited()) {
    result_.limits_enforced = false;
    std::string why = notes_.empty() ? "no cgroup" : notes_;
    notes_ = "the process limit is not enforced here (" + why + ")";
  } else {
    notes_.clear();  // nothing the caller asked for is missing
  }
  result_.containment = ContainmentName(cgroup_.contained(), sandboxed_);
  return true;
}

bool Step::PrepareSandbox(std::vector<std::string>* argv, const std::string& path_env) {
  std::string* err = &result_.error;
  const std::string& name = spec_.argv[0];
  if (!context_.sandbox) {
    *err = "cannot run '" + name + "' in the sandbox: " + context_.sandbox_why;
    return false;
  }
  const SandboxHost& host = *context_.sandbox;
  const SandboxSpec& sb = spec_.sandbox;
  for (const Mount& m : sb.mounts) {
    const std::string& target = m.target.empty() ? m.source : m.target;
    bool needs_source = m.kind != Mount::Kind::kHidden;
    if ((needs_source && !m.source.starts_with('/')) || !target.starts_with('/')) {
      *err = "cannot run '" + name + "': the sandbox's mount '" + m.source + "' -> '" + target +
             "' is not an absolute path";
      return false;
    }
    if (needs_source && !m.optional && access(m.source.c_str(), F_OK) != 0) {
      *err = ErrnoText("cannot run '" + name + "': the sandbox's mount source '" + m.source + "'");
      return false;
    }
  }
  if (std::string problem = SandboxMountProblem(host, sb); !problem.empty()) {
    *err = "cannot run '" + name + "': " + problem;
    return false;
  }
  if (!sb.home.empty()) {
    struct stat st;
    if (stat(sb.home.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      *err = "cannot run '" + name + "': the sandbox's home '" + sb.home + "' is not a folder";
      return false;
    }
  }
  if (!spec_.cwd.empty()) {
    bool tmpfs_root = false;
    std::string host_cwd =
        spec_.cwd.starts_with('/') ? SandboxHostPath(host, sb, spec_.cwd, &tmpfs_root) : "";
    struct stat st;
    bool is_dir = tmpfs_root ||
                  (!host_cwd.empty() && stat(host_cwd.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
    if (!is_dir) {
      *err = "cannot run '" + name + "': working directory '" + spec_.cwd +
             "' does not exist in the sandbox";
      return false;
    }
  }
  // argv[0] is looked up as bwrap will, inside the sandbox's view; a
  // relative path without a working directory is left to bwrap.
  std::string inside = name;
  bool relative_unknown =
      name.find('/') != std::string::npos && !name.starts_with('/') && spec_.cwd.empty();
  if (!relative_unknown) {
    auto to_host = [&](const std::string& p) { return SandboxHostPath(host, sb, p); };
    std::string found;
    if (!FindProgram(name, path_env, spec_.cwd, &found, err, to_host)) {
      *err += " (in the sandbox)";
      return false;
    }
    inside = found;
  }
  // bwrap's status descriptor: a number above every one the caller passes.
  int status_fd = 3;
  for (const auto& fd : fds_) status_fd = std::max(status_fd, fd.first + 1);
  if (!MakePipe(&bwrap_r_, &bwrap_w_, err)) return false;
  SetNonblocking(bwrap_r_.get());
  fds_.push_back({status_fd, bwrap_w_.get()});
  std::vector<std::string> command = spec_.argv;
  command[0] = inside;
  *argv = SandboxArgv(host, sb, spec_.cwd, status_fd, command);
  program_ = host.bwrap;
  result_.sandboxed = true;
  return true;
}

bool Step::Launch() {
  plan_.path = program_.c_str();
  plan_.argv = argv_->get();
  plan_.envp = envp_->get();
  plan_.cwd = cwd_.empty() ? nullptr : cwd_.c_str();
  plan_.stdin_fd = in_r_.get();
  plan_.output_fd = out_w_.get();
  plan_.status_fd = status_w_.get();
  plan_.control_fd = control_r_.get();
  plan_.n_fds = 0;
  for (const auto& [child, parent] : fds_) {
    plan_.fd_from[plan_.n_fds] = parent;
    plan_.fd_to[plan_.n_fds] = child;
    ++plan_.n_fds;
  }
  plan_.n_cgroup_procs = 0;
  for (int fd : cgroup_.procs_fds()) {
    if (plan_.n_cgroup_procs < kMaxCgroupFds) plan_.cgroup_procs[plan_.n_cgroup_procs++] = fd;
  }
  plan_.cgroup_dir = cgroup_.contained() ? cgroup_.v2_folder_fd() : -1;
  plan_.file_size_limit = spec_.limits.file_bytes;
  plan_.sandbox_layers = sandboxed_;
  plan_.ignored_signals = IgnoredSignals();
  if (!process_.Start(&plan_, context_.share_memory, &result_.error)) return false;
  supervisor_ = process_.pid();
  // Only the run may hold the write ends of its pipes, so that nothing of
  // ours keeps them open.
  out_w_.Reset();
  in_r_.Reset();
  status_w_.Reset();
  control_r_.Reset();
  bwrap_w_.Reset();
  cgroup_.CloseProcsFds();
  pidfd_.Reset(PidfdOpen(supervisor_));
  // The supervisor's kStarted record is read in the loop, not waited for
  // here: one wake-up less for a short command.
  SetNonblocking(status_r_.get());
  sink_ = std::make_unique<OutputSink>(log_.get(), spec_.log_limit_bytes, spec_.tail_bytes,
                                       spec_.on_line);
  if (spec_.timeout_s > 0) deadline_ = start_ + Duration(spec_.timeout_s);
  sample_interval_ = std::chrono::duration_cast<Clock::duration>(kFirstSample);
  next_sample_ = start_ + sample_interval_;
  return true;
}

}  // namespace ratchet
