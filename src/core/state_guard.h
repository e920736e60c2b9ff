// The port that keeps an external proposer (a coding agent, a script, a
// reviewer) from changing ratchet's own state: the git metadata in .git and
// the ledger, notes and logs in .ratchet. The runner makes those paths
// read-only with a sandbox where one works (RunSpec::readonly_paths); a
// guard is the check that holds either way: it records the state before the
// run, compares after, puts back what changed, removes what appeared, and
// says what it found.
//
// The real guard is FileStateGuard (src/vcs/file_state_guard.h), told by
// HeldFiles which files ratchet holds open (its ledger: LedgerFiles,
// src/store/ledger_files.h); the proposers get guards from ProposerDeps.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ratchet {

struct GuardReport {
  std::vector<std::string> changed;       // relative paths changed, removed or added
  std::vector<std::string> not_restored;  // of those, what could not be undone
  bool fatal = false;                     // a file ratchet holds open could not be put back
  std::string detail;                     // why, when fatal
  bool clean() const { return changed.empty(); }
  /// "changed .ratchet/ledger.db, .git/refs/heads/x (put back)" etc.
  std::string Describe() const;
};

class StateGuard {
 public:
  virtual ~StateGuard() = default;
  /// Records the state under root/.git and root/.ratchet. `skip` lists
  /// files (relative) the run may write, e.g. its own log. Missing folders
  /// are fine (nothing to guard). False only on an I/O error.
  virtual bool Capture(const std::string& root, const std::vector<std::string>& skip,
                       std::string* err) = 0;
  /// Compares with the capture and undoes every difference it can.
  virtual GuardReport CheckAndRestore() = 0;
};

/// A fresh guard for one proposer run.
using StateGuardFactory = std::function<std::unique_ptr<StateGuard>()>;

/// The files under the loop's root that ratchet itself holds open while the
/// loop runs. A guard keeps them by inode and restores their bytes in place:
/// a replacement file would leave ratchet's open handle on a file nobody
/// else sees.
class HeldFiles {
 public:
  virtual ~HeldFiles() = default;
  /// Whether ratchet holds `rel` (relative to the loop's root) open.
  virtual bool Held(const std::string& rel) const = 0;
  /// Whether readers legitimately write it, so that its bytes are not
  /// compared (only a deleted or replaced file counts as a change).
  virtual bool WrittenByReaders(const std::string& rel) const = 0;
  /// The held file that must go back together with `rel` whenever `rel`
  /// is restored, or "".
  virtual std::string RestoredWith(const std::string& rel) const = 0;
  /// The bytes of the held file at `path`, which must still be the file
  /// (dev, ino); false when it is not, or on an I/O error.
  virtual bool Read(const std::string& path, uint64_t dev, uint64_t ino, std::string* content) = 0;
  /// Writes `content` into that very file (not a replacement), so every
  /// open handle on it sees the restored bytes.
  virtual bool WriteInPlace(const std::string& path, uint64_t dev, uint64_t ino,
                            const std::string& content, unsigned mode) = 0;
};

}  // namespace ratchet
