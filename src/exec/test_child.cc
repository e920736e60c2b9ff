// A small program the exec tests run, for behaviours a shell cannot show
// exactly. Usage: exec_test_child MODE [ARGS...]
//   mem MB HOLD_S     touch MB MiB of memory, print "ready", stay HOLD_S seconds
//   spin SECONDS      burn CPU for SECONDS of CPU time
//   lines N           print "line <i>" for i in [0, N)
//   fds               print the open file descriptors, space separated
//   pgid              print "<pid> <pgid> <sid>"
//   escape PIDFILE    fork a child that leaves the process group (setpgid)
//                     and sleeps 30 s; append its pid to PIDFILE and exit
//   connect IP PORT   open a TCP connection; print "connected" (exit 0) or
//                     "cannot connect: <why>" (exit 1)
//   write PATH BYTES  write BYTES zero bytes to PATH; print "wrote" (exit 0)
//                     or "cannot write: <why>" (exit 1)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  if (mode == "mem" && argc == 4) {
    size_t bytes = std::strtoull(argv[2], nullptr, 10) << 20;
    // volatile: the compiler may not drop stores to memory that is then freed.
    volatile char* p = static_cast<char*>(std::malloc(bytes));
    for (size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<char>(i);
    std::printf("ready\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[3])));
    std::free(const_cast<char*>(p));  // leak checkers (sanitizer builds) would fail the run
    return 0;
  }
  if (mode == "spin" && argc == 3) {
    double want = std::atof(argv[2]);
    volatile unsigned long x = 0;
    while (CpuSeconds() < want) {
      for (int i = 0; i < 100000; ++i) x = x + i;
    }
    return 0;
  }
  if (mode == "lines" && argc == 3) {
    long n = std::atol(argv[2]);
    for (long i = 0; i < n; ++i) std::printf("line %ld\n", i);
    return 0;
  }
  if (mode == "fds") {
    std::vector<int> fds;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      fds.push_back(std::atoi(e.path().filename().c_str()));
    }
    // The iterator's own descriptor is listed too; it is closed by now.
    std::string out;
    for (int fd : fds) {
      if (fcntl(fd, F_GETFD) < 0) continue;
      if (!out.empty()) out += ' ';
      out += std::to_string(fd);
    }
    std::printf("%s\n", out.c_str());
    return 0;
  }
  if (mode == "pgid") {
    std::printf("%d %d %d\n", getpid(), getpgid(0), getsid(0));
    return 0;
  }
  if (mode == "escape" && argc == 3) {
    pid_t child = fork();
    if (child == 0) {
      setpgid(0, 0);
      sleep(30);
      _exit(0);
    }
    FILE* f = std::fopen(argv[2], "a");
    std::fprintf(f, "%d\n", child);
    std::fclose(f);
    return 0;
  }
  if (mode == "connect" && argc == 4) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[3])));
    inet_pton(AF_INET, argv[2], &addr.sin_addr);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::printf("cannot connect: %s\n", std::strerror(errno));
      return 1;
    }
    std::printf("connected\n");
    return 0;
  }
  if (mode == "write" && argc == 4) {
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t left = std::strtoull(argv[3], nullptr, 10);
    static char zeros[1 << 16];
    while (fd >= 0 && left > 0) {
      ssize_t w = write(fd, zeros, std::min(left, sizeof zeros));
      if (w <= 0) break;
      left -= static_cast<size_t>(w);
    }
    if (fd < 0 || left > 0) {
      std::printf("cannot write: %s\n", std::strerror(errno));
      return 1;
    }
    std::printf("wrote\n");
    return 0;
  }
  std::fprintf(stderr, "exec_test_child: bad arguments\n");
  return 2;
}
