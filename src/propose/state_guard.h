// Keeps an external proposer (a coding agent, a script) from changing
// ratchet's own state: the git metadata in .git and the ledger, notes and
// logs in .ratchet. The runner makes those paths read-only with a sandbox
// where one works (RunSpec::readonly_paths); this guard is the check that
// holds either way: it records the state before the run, compares after, puts
// back what changed and removes what appeared, and says what it found.
//
// What it records:
//   - .git, except objects/, logs/, lfs/ (and those of submodules),
//     index and the transient ORIG_HEAD,
//     FETCH_HEAD, COMMIT_EDITMSG, AUTO_MERGE: content (refs, HEAD, config,
//     packed-refs, hooks, info/exclude, ...);
//   - .ratchet, except live.json and the run's own log: content; the
//     earlier runs' logs (.ratchet/runs/) by size, time and inode only, so
//     a change there is reported but not undone;
//   - files ratchet holds open (ledger.db, its -wal and -shm, lock) are also
//     hard-linked aside (.ratchet/guard/), so if one is deleted or replaced
//     the very file ratchet's open handle uses is put back, and its bytes
//     are restored in place. ledger.db-shm changes whenever a reader
//     (`ratchet status`) looks, so it is not compared, only restored
//     together with the ledger.
// If a held-open file cannot be put back (its aside link is gone too), the
// report is fatal: ratchet would go on writing to a file nobody can see, so
// the loop must stop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ratchet {

struct GuardReport {
  std::vector<std::string> changed;       // relative paths changed, removed or added
  std::vector<std::string> not_restored;  // of those, what could not be undone
  bool fatal = false;                     // a file ratchet holds open could not be put back
  std::string detail;                     // why, when fatal
  bool clean() const { return changed.empty(); }
  /// "changed .ratchet/ledger.db, .git/refs/heads/x (restored)" etc.
  std::string Describe() const;
};

class StateGuard {
 public:
  StateGuard() = default;
  ~StateGuard();  // removes the aside links
  StateGuard(const StateGuard&) = delete;
  StateGuard& operator=(const StateGuard&) = delete;

  /// Records the state under root/.git and root/.ratchet. `skip` lists
  /// files (relative) the run may write, e.g. its own log. Missing folders
  /// are fine (nothing to guard). False only on an I/O error.
  bool Capture(const std::string& root, const std::vector<std::string>& skip, std::string* err);
  /// Compares with the capture and undoes every difference it can.
  GuardReport CheckAndRestore();

  struct Entry {
    enum class Kind { kFile, kSymlink, kDir, kOther } kind = Kind::kFile;
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    unsigned mode = 0;
    std::optional<std::string> content;  // for files whose bytes are kept
    std::string link_target;             // for symlinks
    bool pinned = false;                 // held open by ratchet: kept by inode
    bool watch_only = false;             // compared, never restored
    bool restore_only = false;           // restored, never compared (-shm)
  };

 private:
  bool Scan(std::map<std::string, Entry>* out, bool with_content, std::string* err) const;
  bool Guarded(const std::string& rel) const;
  void Restore(const std::string& rel, const Entry& before, const Entry* now, GuardReport* report);
  void DropAsideLinks();

  std::string root_;
  std::vector<std::string> skip_;
  std::map<std::string, Entry> before_;
  std::map<std::string, std::string> aside_;  // rel path -> absolute aside link
};

}  // namespace ratchet
