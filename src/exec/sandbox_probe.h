// Whether the sandboxes work on this machine: probed once per process (and
// bwrap name) by running them on `true`, remembered after.
#pragma once

#include <string>

#include "exec/sandbox.h"

namespace ratchet {

struct SandboxProbe {
  bool works = false;
  std::string why;   // what failed, when it does not work
  SandboxHost host;  // the facts SandboxArgv needs (bwrap's path, ...)
};

/// The sandbox of SandboxSpec with `bwrap` (a name looked up in PATH, or a
/// path; "" means no sandbox). Runs `bwrap --help` (for --disable-userns)
/// and a sandboxed `true` with the full set of options, the first time.
const SandboxProbe& ProbeSandbox(const std::string& bwrap);

/// The legacy readonly_paths sandbox (bwrap --dev-bind / /).
const SandboxProbe& ProbeLegacySandbox(const std::string& bwrap);

}  // namespace ratchet
