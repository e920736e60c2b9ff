// The sandbox's command lines: bubblewrap (bwrap) around the command.
//
// SandboxArgv is the sandbox of RunSpec::sandbox (runner.h's SandboxSpec): a
// view built from nothing. New user, mount, pid, IPC, UTS (and cgroup)
// namespaces, and a new network namespace unless the spec allows the network;
// the caller mapped to an unprivileged uid (65534 when ratchet is root, else
// ratchet's own uid); every capability dropped; a new session (no TIOCSTI on
// ratchet's terminal); the sandbox dies with its parent; no nested user
// namespaces unless asked (--disable-userns, bwrap 0.8.0). Inside: the
// system folders read-only, a new /proc of the pid namespace (ratchet's
// processes do not exist there), a minimal /dev plus the GPU device nodes,
// private /tmp and /dev/shm, HOME at kSandboxHome (the spec's folder bound
// writable, or an empty tmpfs), then the spec's mounts in order.
//
// With a pid namespace the tree of a sandboxed run is
//   supervisor -> bwrap -> bwrap (init of the pid namespace) -> command
// and killing that init kills everything in the namespace (the runner's
// containment without a cgroup). bwrap reports the init's pid on the status
// descriptor (--json-status-fd), and reports the command's death by signal N
// as exit 128+N.
//
// BwrapArgv is the legacy sandbox of RunSpec::readonly_paths: the whole host
// bound as it is (--dev-bind / /), the paths read-only on top, no new pid or
// network namespace; it keeps callers that have not moved to SandboxSpec
// working and protects nothing from a hostile run.
#pragma once

#include <string>
#include <vector>

#include "core/runner.h"

namespace ratchet {

/// $HOME inside the sandbox.
inline constexpr const char* kSandboxHome = "/home/sandbox";

/// What the sandbox's command line depends on in this machine (probed once
/// by the runner; plain data, so argv building is tested without a host).
struct SandboxHost {
  std::string bwrap;            // path of the bwrap program
  bool disable_userns = false;  // bwrap has --disable-userns
  bool as_root = false;         // ratchet's euid is 0: map it to 65534 inside
  /// The system folders that exist here, in order; `link` is the target of
  /// one that is a symlink (/bin -> usr/bin on merged-/usr systems), which
  /// is made a symlink inside too.
  struct SystemDir {
    std::string path;
    std::string link;
  };
  std::vector<SystemDir> system_dirs;
  std::vector<std::string> devices;  // GPU device nodes and folders present
};

/// The folders shown read-only, where they exist.
const std::vector<std::string>& SandboxSystemDirs();

/// Facts of this machine for SandboxHost (all but bwrap and disable_userns).
SandboxHost ScanSandboxHost();

/// The argv that runs `command` (argv[0] as found inside) in the sandbox.
/// `cwd`: the working directory inside ("" keeps bwrap's default); status_fd:
/// the descriptor number bwrap writes its JSON status to (-1: none).
std::vector<std::string> SandboxArgv(const SandboxHost& host, const SandboxSpec& spec,
                                     const std::string& cwd, int status_fd,
                                     const std::vector<std::string>& command);

/// The host path that path `inside` (absolute, normalised) shows inside the
/// sandbox: the last mount that covers it wins. "" when it comes from no
/// host file (a tmpfs, a hidden path, outside the view); *tmpfs_root is set
/// when `inside` is the root of a tmpfs (it exists, empty).
std::string SandboxHostPath(const SandboxHost& host, const SandboxSpec& spec,
                            const std::string& inside, bool* tmpfs_root = nullptr);

/// Why bwrap could not make the spec's mounts ("" when it can, as far as
/// can be told beforehand): a mount point under a read-only folder that
/// does not exist there.
std::string SandboxMountProblem(const SandboxHost& host, const SandboxSpec& spec);

/// The legacy argv for readonly_paths (see above); argv[0] is replaced by
/// `program`. Relative readonly paths are taken from `cwd` (empty: ours);
/// paths that do not exist are skipped (there is nothing there to protect).
std::vector<std::string> BwrapArgv(const std::string& bwrap,
                                   const std::vector<std::string>& readonly, const std::string& cwd,
                                   const std::string& program,
                                   const std::vector<std::string>& argv);

}  // namespace ratchet
