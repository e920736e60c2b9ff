// Helpers shared by the exec tests: temporary directories, pid files written
// by the commands under test, and checks that processes are gone.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ratchet::testing {

/// The exec_test_child program (see test_child.cc).
inline const char* TestChild() { return EXEC_TEST_CHILD; }
/// The exec_test_driver program (see exec_test_driver.cc).
inline const char* TestDriver() { return EXEC_TEST_DRIVER; }

/// A fresh directory, removed with its contents on destruction.
class TempDir {
 public:
  /// open_to_all: mode 0777, for runs as another user.
  explicit TempDir(bool open_to_all = false);
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);

/// The pids in a file, one per line (a missing file has none).
std::vector<pid_t> ReadPids(const std::string& path);

/// True while the process exists and has not ended (a zombie has).
bool Alive(pid_t pid);

/// The pids of this test's processes still alive, as "pid pid ..." ("" when
/// none): the run's processes must all be gone when Run returns.
std::string Survivors(const std::vector<pid_t>& pids);

/// The children this test process has (its threads' children included):
/// after a run, there must be none (the supervisor was reaped).
std::vector<pid_t> OwnChildren();

/// The command line of `pid`, its arguments joined by spaces ("" once it
/// has ended).
std::string CommandLineOf(pid_t pid);

/// The pids of processes whose command line contains `token` (a unique
/// argument such as "sleep 31.0427"): finds a run's processes even inside a
/// pid namespace, where their own pids mean nothing to us.
std::vector<pid_t> ProcessesWith(const std::string& token);

/// What a run of exec_test_driver printed, and how it ended.
struct DriverOutput {
  std::string out;      // its stdout (one JSON line when it worked)
  std::string err;      // its stderr
  int status = -1;      // waitpid status
  bool killed = false;  // it was still running after limit_s and was killed
};
/// Runs exec_test_driver with `spec_json` in `cwd`; as the unprivileged
/// nobody (uid 65534, through setpriv, no capabilities) when as_nobody. A
/// driver still running after limit_s gets SIGCONT then SIGKILL.
DriverOutput RunDriver(const std::string& spec_json, bool as_nobody, const std::string& cwd,
                       double limit_s = 60);

/// Polls fn every millisecond until it is true or `seconds` pass.
bool WaitFor(const std::function<bool()>& fn, double seconds);

}  // namespace ratchet::testing
