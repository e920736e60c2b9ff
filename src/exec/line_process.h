// A child process that answers requests one line at a time over its stdin
// and stdout (the external-mechanism protocol). It runs in its own process
// group (a Ctrl-C at the terminal does not reach it; stopping it stops its
// children too), stderr goes to a file, and every answer has a deadline: a
// process that does not answer in time is killed, never waited for. With
// Options::sandbox it runs in the sandbox of every untrusted step (a
// mechanism an agent wrote is untrusted code): bwrap's namespaces, no
// credentials in its environment, and the pid namespace dies with it.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "core/runner.h"

namespace ratchet {

class LineProcess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0] is looked up in PATH
    std::string cwd;                // "" = ours
    std::vector<std::pair<std::string, std::string>> env;  // added to ours
    std::string stderr_path;        // appended to; "" = /dev/null
    size_t max_line_bytes = 1 << 20;
    /// When enabled: run inside bwrap with this view; cwd is then the
    /// folder inside, and argv[0] must be found there.
    SandboxSpec sandbox;
    std::string bwrap = "bwrap";
  };
  enum class Outcome {
    kAnswered,  // *answer holds one line (no newline)
    kTimedOut,  // no full line before the deadline; the process was killed
    kExited,    // the process closed its output or died; see exit_description()
    kTooLong,   // the line passed max_line_bytes; the process was killed
  };

  LineProcess() = default;
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  /// Starts the process. False with *err ("cannot run 'foo': No such file or
  /// directory") when it cannot be started.
  bool Start(const Options& options, std::string* err);
  /// Writes `line` and a newline, then reads one line of answer, all within
  /// timeout_s. Anything but kAnswered leaves the process stopped.
  Outcome Exchange(const std::string& line, double timeout_s, std::string* answer);
  /// Closes its stdin, gives it grace_s to exit, then kills the group.
  void Stop(double grace_s = 1);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  /// "exit 3", "signal 11 (Segmentation fault)", "still running" (once stopped:
  /// how it ended).
  const std::string& exit_description() const { return exit_description_; }

 private:
  void Kill();
  void Reap(bool wait);
  int in_ = -1;   // its stdin (our write end)
  int out_ = -1;  // its stdout (our read end)
  pid_t pid_ = -1;
  std::string buffer_;
  size_t max_line_bytes_ = 1 << 20;
  std::string exit_description_;
};

}  // namespace ratchet
