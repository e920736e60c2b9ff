// Git lock files left behind by a process that was killed mid-write.
//
// git (and libgit2) writes a ref, the index or HEAD by creating NAME.lock,
// filling it and renaming it over NAME. A `kill -9` between the two leaves the
// lock, and every later write of NAME fails ("failed to lock file ... for
// writing") until someone deletes it. ratchet is killed on purpose (a job's
// time limit, an OOM killer, Ctrl-C twice), so `ratchet run` clears such locks
// itself once it holds the loop lock: no other ratchet can be writing then,
// and a git command of the user's holds a lock for milliseconds, not seconds.
#pragma once

#include <string>
#include <vector>

namespace ratchet {

/// The lock files git could leave in `git_dir`: *.lock directly inside it
/// (index.lock, HEAD.lock, packed-refs.lock, ...) and anywhere under refs/.
/// Sorted; paths are absolute when `git_dir` is.
std::vector<std::string> FindGitLocks(const std::string& git_dir);

/// Waits up to `settle_seconds` for the lock files in `git_dirs` to go away (a
/// live git command finishing its write), then deletes those still there and
/// lists them in *removed. Returns false only when one cannot be deleted.
bool RemoveStaleGitLocks(const std::vector<std::string>& git_dirs, double settle_seconds,
                         std::vector<std::string>* removed, std::string* err);

}  // namespace ratchet
