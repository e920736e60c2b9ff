#include "exec/line_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "exec/sandbox.h"
#include "exec/sandbox_probe.h"
#include "exec/spawn_args.h"

extern char** environ;

namespace ratchet {

namespace {

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int RemainingMs(double deadline) {
  const double left = deadline - Now();
  return left <= 0 ? 0 : static_cast<int>(std::min(left * 1000 + 1, 3.6e6));
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

LineProcess::~LineProcess() { Stop(0); }

bool LineProcess::Start(const Options& options, std::string* err) {
  if (running()) Stop(0);
  if (options.argv.empty()) {
    *err = "no command to run";
    return false;
  }
  max_line_bytes_ = options.max_line_bytes;
  buffer_.clear();
  exit_description_ = "still running";
  // A sandboxed mechanism is untrusted code: none of the user's credentials.
  std::vector<std::string> env = MergeEnvironment(environ, options.env, options.sandbox.enabled);
  std::string path_env, program;
  FindEnv(env, "PATH", &path_env);
  std::vector<std::string> argv = options.argv;
  std::string cwd = options.cwd;
  if (options.sandbox.enabled) {
    const SandboxProbe& probe = ProbeSandbox(options.bwrap);
    if (!probe.works) {
      *err = "the sandbox does not work here: " + probe.why;
      return false;
    }
    auto to_host = [&](const std::string& inside) {
      return SandboxHostPath(probe.host, options.sandbox, inside);
    };
    if (!FindProgram(options.argv[0], path_env, options.cwd, &program, err, to_host)) return false;
    argv = SandboxArgv(probe.host, options.sandbox, options.cwd, -1, options.argv);
    program = probe.host.bwrap;
    cwd.clear();  // bwrap changes into options.cwd inside
  } else if (!FindProgram(options.argv[0], path_env, options.cwd, &program, err)) {
    return false;
  }

  // Its stdin is a socket, so a write to a mechanism that has gone fails
  // with EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in ratchet.
  int in[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    *err = std::string("socketpair: ") + strerror(errno);
    return false;
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    *err = std::string("pipe: ") + strerror(errno);
    close(in[0]), close(in[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  const std::string errpath = options.stderr_path.empty() ? "/dev/null" : options.stderr_path;
  posix_spawn_file_actions_addopen(&fa, 2, errpath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group; default signal handling and an empty mask, since
  // ratchet blocks or ignores some signals that exec would pass on.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&defaults, s);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  CStringArray args(argv), envp(env);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, args.get(), envp.get());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    *err = "cannot run '" + options.argv[0] + "': " + strerror(rc);
    return false;
  }
  pid_ = pid;
  in_ = in[1];
  out_ = out[0];
  fcntl(in_, F_SETFL, fcntl(in_, F_GETFL) | O_NONBLOCK);
  fcntl(out_, F_SETFL, fcntl(out_, F_GETFL) | O_NONBLOCK);
  return true;
}

LineProcess::Outcome LineProcess::Exchange(const std::string& line, double timeout_s,
                                           std::string* answer) {
  answer->clear();
  if (!running()) return Outcome::kExited;
  const double deadline = Now() + timeout_s;
  {
    const std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = send(in_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        struct pollfd p = {in_, POLLOUT, 0};
        if (poll(&p, 1, RemainingMs(deadline)) == 0) {
          Kill();
          return Outcome::kTimedOut;
        }
        continue;
      }
      // EPIPE: it closed its input, so it is gone or going.
      Stop(timeout_s);
      return Outcome::kExited;
    }
  }
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *answer = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!answer->empty() && answer->back() == '\r') answer->pop_back();
      return Outcome::kAnswered;
    }
    if (buffer_.size() > max_line_bytes_) {
      Kill();
      return Outcome::kTooLong;
    }
    struct pollfd p = {out_, POLLIN, 0};
    const int ready = poll(&p, 1, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      Kill();
      return Outcome::kTimedOut;
    }
    char chunk[65536];
    const ssize_t n = read(out_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      Stop(timeout_s);  // its output is closed: collect how it ended
      return Outcome::kExited;
    } else if (errno != EAGAIN && errno != EINTR) {
      Kill();
      return Outcome::kExited;
    }
  }
}

void LineProcess::Reap(bool wait) {
  if (pid_ <= 0) return;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, wait ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_description_ = Describe(status);
    pid_ = -1;
  } else if (r < 0) {
    pid_ = -1;
  }
}

void LineProcess::Kill() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    Reap(true);
  }
  CloseFd(&in_);
  CloseFd(&out_);
}

void LineProcess::Stop(double grace_s) {
  CloseFd(&in_);  // end of input: a well-behaved mechanism exits now
  if (pid_ > 0) {
    const double deadline = Now() + grace_s;
    while (true) {
      // Has it exited? (Not reaped yet, so its group id cannot be reused
      // before the group is killed below.)
      siginfo_t info;
      std::memset(&info, 0, sizeof info);
      if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid_)
        break;
      if (Now() >= deadline) break;
      struct timespec pause = {0, 5'000'000};
      nanosleep(&pause, nullptr);
    }
    kill(-pid_, SIGKILL);  // it, or what it left running
    Reap(true);
  }
  CloseFd(&out_);
}

}  // namespace ratchet
