#include "exec/test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "exec/proc_tree.h"

namespace ratchet::testing {

TempDir::TempDir(bool open_to_all) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ratchet-exec-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  path_ = made ? made : "";
  if (made && open_to_all) chmod(made, 0777);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::vector<pid_t> ReadPids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  long pid;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

bool Alive(pid_t pid) {
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  // A zombie has ended; it only waits for its parent to reap it.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

std::string Survivors(const std::vector<pid_t>& pids) {
  std::string out;
  for (pid_t pid : pids) {
    if (!Alive(pid)) continue;
    if (!out.empty()) out += ' ';
    out += std::to_string(pid);
  }
  return out;
}

std::vector<pid_t> OwnChildren() {
  pid_t pids[256];
  int n = ListDescendants(getpid(), pids, 256);
  // Direct children only: their parent is us.
  std::vector<pid_t> out;
  for (int i = 0; i < n; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pids[i]) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid()) out.push_back(pids[i]);
  }
  return out;
}

std::string CommandLineOf(pid_t pid) {
  std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : cmdline)
    if (c == '\0') c = ' ';
  return cmdline;
}

std::vector<pid_t> ProcessesWith(const std::string& token) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid != getpid() && CommandLineOf(pid).find(token) != std::string::npos && Alive(pid))
      out.push_back(pid);
  }
  closedir(d);
  return out;
}

DriverOutput RunDriver(const std::string& spec_json, bool as_nobody, const std::string& cwd,
                       double limit_s) {
  DriverOutput result;
  std::vector<std::string> args;
  if (as_nobody) {
    args = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"};
  }
  args.insert(args.end(), {TestDriver(), spec_json});
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return result;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = deadline - std::chrono::steady_clock::now();
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(left).count());
    if (ms <= 0) {
      result.killed = true;
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, ms) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  waitpid(pid, &result.status, 0);
  return result;
}

bool WaitFor(const std::function<bool()>& fn, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!fn()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace ratchet::testing
