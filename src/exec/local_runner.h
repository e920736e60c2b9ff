// The real ProcessRunner: runs a command as a local process tree with a
// deadline, captures its output, and leaves no process of it behind.
//
// How a run is built (details in supervisor.h, supervisor_process.h and
// local_runner.cc):
//   ratchet (this thread) -- clone --> supervisor (subreaper) -- vfork+exec --> command
// The command leads its own process group; stdout and stderr share one pipe
// that this thread reads, with poll(), alongside a pidfd of the supervisor, so
// a no-op command returns as soon as it exits. The supervisor kills and reaps
// every remaining process of the run when the command exits, at the
// deadline's SIGKILL, on cancel, or when ratchet itself dies.
#pragma once

#include <string>

#include "core/runner.h"

namespace ratchet {

struct LocalRunnerOptions {
  /// bubblewrap, for RunSpec::readonly_paths ("bwrap": looked up in PATH).
  /// Empty: never sandbox.
  std::string bwrap = "bwrap";
  /// Start the run's supervisor sharing ratchet's memory (see
  /// supervisor_process.h) rather than with fork(). Off: always fork (tests
  /// cover both; sanitizer builds always fork).
  bool share_memory = true;
};

class LocalProcessRunner : public ProcessRunner {
 public:
  explicit LocalProcessRunner(LocalRunnerOptions options = {});

  /// See ProcessRunner and RunSpec. Thread-safe: runs may go on in several
  /// threads at once; each only waits for, and only kills, its own processes.
  /// RunResult::sandboxed tells whether readonly_paths were enforced: when
  /// bwrap does not work here the command runs without them.
  /// Under the sandbox the command's parent is bwrap, which reports the
  /// command's death by signal N as exit 128+N (as a shell does).
  RunResult Run(const RunSpec& spec) override;

  /// Whether bwrap works here (probed once per binary and remembered); when
  /// it does not, *why says what failed.
  bool SandboxAvailable(std::string* why = nullptr) override;

 private:
  LocalRunnerOptions options_;
};

}  // namespace ratchet
