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

/// A fresh directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
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

/// Polls fn every millisecond until it is true or `seconds` pass.
bool WaitFor(const std::function<bool()>& fn, double seconds);

}  // namespace ratchet::testing
