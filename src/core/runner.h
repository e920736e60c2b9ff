// The process-runner port: how policy code asks for a command to be run.
// The real implementation (src/exec/local_runner.h) runs a process group with
// a deadline; tests use a fake that returns scripted results.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratchet {

struct RunSpec {
  /// argv[0] is looked up in PATH. For a shell command line use ShellCommand().
  std::vector<std::string> argv;
  std::string cwd;  // empty: the current directory
  /// Added to (or overriding) ratchet's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  /// Hard limit in seconds; 0 means none. At the deadline the whole process
  /// group gets SIGTERM, then SIGKILL after grace_s.
  double timeout_s = 0;
  double grace_s = 5;
  /// stdout and stderr, interleaved, are written here (created, truncated).
  /// Empty: output is not written to a file.
  std::string log_path;
  /// At most this many bytes of output reach log_path; the rest is dropped
  /// and a note is written, then the last tail_bytes of output at the end.
  uint64_t log_limit_bytes = 16ull << 20;
  /// Given to the process on stdin; without it stdin is /dev/null.
  std::optional<std::string> stdin_data;
  /// Called with every complete output line (no newline), as it arrives.
  std::function<void(std::string_view line)> on_line;
  /// When this becomes true the run is stopped like a timeout and reported
  /// as cancelled. May be null.
  const std::atomic<bool>* cancel = nullptr;
  /// Paths the process must not be able to write (bind-mounted read-only in
  /// a sandbox when one is available; see src/exec).
  std::vector<std::string> readonly_paths;
  /// How many bytes of the end of the output RunResult::tail keeps.
  size_t tail_bytes = 64 << 10;
};

/// Wraps a shell command line as {"/bin/sh", "-c", line}.
inline std::vector<std::string> ShellCommand(const std::string& line) {
  return {"/bin/sh", "-c", line};
}

struct RunResult {
  enum class End { kExited, kSignaled, kTimedOut, kCancelled, kFailedToStart };
  End end = End::kFailedToStart;
  int exit_code = -1;  // valid when end == kExited
  int signal = 0;      // valid when end == kSignaled
  double wall_s = 0;
  double cpu_s = 0;           // user + system of the whole process tree
  double peak_rss_mb = 0;     // peak resident memory of the whole tree
  uint64_t output_bytes = 0;  // all output produced, including dropped bytes
  bool output_truncated = false;
  /// True when readonly_paths were enforced by a sandbox; false when the list
  /// was empty or no sandbox works here (the command then ran without it).
  bool sandboxed = false;
  std::string tail;   // the last tail_bytes of output
  std::string error;  // why it failed to start, or other runner trouble
  bool ok() const { return end == End::kExited && exit_code == 0; }
  /// "exit 0", "exit 3", "signal 9 (Killed)", "timed out after 12.0s", ...
  std::string Describe() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  /// Runs to completion. When it returns, no process of the run is left.
  virtual RunResult Run(const RunSpec& spec) = 0;
};

}  // namespace ratchet
