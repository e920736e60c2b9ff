// The read-only sandbox for RunSpec::readonly_paths: bubblewrap (bwrap) with
// the whole file system bound as it is, and the given paths bound read-only
// on top. bwrap needs user namespaces (or root); in a container they may be
// missing, so whether it works is probed, and the runner falls back to
// running unsandboxed and says so in RunResult::sandboxed.
#pragma once

#include <string>
#include <vector>

namespace ratchet {

/// The argv that runs `argv` under bwrap with `readonly` bound read-only;
/// argv[0] is replaced by `program`, the path found for it. Relative readonly
/// paths are taken from `cwd` (empty: ours); paths that do not exist are
/// skipped (there is nothing there to protect).
std::vector<std::string> BwrapArgv(const std::string& bwrap,
                                   const std::vector<std::string>& readonly, const std::string& cwd,
                                   const std::string& program,
                                   const std::vector<std::string>& argv);

}  // namespace ratchet
