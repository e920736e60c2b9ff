// The real ProcessRunner: runs a command as a local process tree with a
// deadline, captures its output, and leaves no process of it behind. Each
// Run drives one step (step.h) with a private LocalStepRunner
// (step_runner.h), so the blocking and the non-blocking runner share every
// line of process handling. Containment (a cgroup, the sandbox's pid
// namespace, or the supervisor), the sandbox and the limits are those of
// step.h, sandbox.h and cgroup.h.
#pragma once

#include <string>

#include "core/runner.h"

namespace ratchet {

struct LocalRunnerOptions {
  /// bubblewrap, for RunSpec::sandbox and the legacy readonly_paths ("bwrap":
  /// looked up in PATH). Empty: no sandbox (a sandboxed spec fails to start;
  /// readonly_paths are ignored).
  std::string bwrap = "bwrap";
  /// Start the run's supervisor sharing ratchet's memory (see
  /// supervisor_process.h) rather than with fork(). Off: always fork (tests
  /// cover both; sanitizer builds always fork).
  bool share_memory = true;
  /// A cgroup per step where this machine allows one (cgroup.h). Off: the
  /// pid namespace or the supervisor contains it (benchmarks, probes).
  bool cgroups = true;
};

class LocalProcessRunner : public ProcessRunner {
 public:
  explicit LocalProcessRunner(LocalRunnerOptions options = {});

  /// See ProcessRunner and RunSpec. Thread-safe: runs may go on in several
  /// threads at once; each only waits for, and only kills, its own processes.
  /// RunResult::sandboxed tells whether the sandbox (or, for the legacy
  /// readonly_paths, bwrap) was used: readonly_paths without a working bwrap
  /// run unprotected; sandbox.enabled without one fails to start.
  /// Under bwrap the command's parent is bwrap, which reports the command's
  /// death by signal N as exit 128+N (as a shell does).
  RunResult Run(const RunSpec& spec) override;

  /// Whether RunSpec::sandbox works here (probed once per process and bwrap
  /// name, and remembered); when it does not, *why says what failed.
  bool SandboxAvailable(std::string* why = nullptr) override;

 private:
  LocalRunnerOptions options_;
};

}  // namespace ratchet
