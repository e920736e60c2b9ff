// The StateGuard (core/state_guard.h) over the loop directory's files.
//
// What it records:
//   - .git, except objects/, logs/, lfs/ (and those of submodules),
//     index and the transient ORIG_HEAD,
//     FETCH_HEAD, COMMIT_EDITMSG, AUTO_MERGE: content (refs, HEAD, config,
//     packed-refs, hooks, info/exclude, ...);
//   - .ratchet, except live.json and the run's own log: content; the
//     earlier runs' logs (.ratchet/runs/) by size, time and inode only, so
//     a change there is reported but not undone;
//   - files ratchet holds open (HeldFiles: the ledger and its lock) are also
//     hard-linked aside (.ratchet/guard/), so if one is deleted or replaced
//     the very file ratchet's open handle uses is put back, and its bytes
//     are restored in place through HeldFiles.
// If a held file cannot be put back (its aside link is gone too), the report
// is fatal: ratchet would go on writing to a file nobody can see, so the
// loop must stop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/state_guard.h"

namespace ratchet {

class FileStateGuard : public StateGuard {
 public:
  /// `held` may be null (ratchet holds nothing open under the root); it must
  /// outlive the guard.
  explicit FileStateGuard(HeldFiles* held) : held_(held) {}
  /// Makes such guards, for ProposerDeps and ReviewerDeps.
  static StateGuardFactory Factory(HeldFiles* held);
  ~FileStateGuard() override;  // removes the aside links
  FileStateGuard(const FileStateGuard&) = delete;
  FileStateGuard& operator=(const FileStateGuard&) = delete;

  bool Capture(const std::string& root, const std::vector<std::string>& skip,
               std::string* err) override;
  GuardReport CheckAndRestore() override;

 private:
  struct Entry {
    enum class Kind { kFile, kSymlink, kDir, kOther } kind = Kind::kFile;
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    unsigned mode = 0;
    std::optional<std::string> content;  // for files whose bytes are kept
    std::string link_target;             // for symlinks
    bool held = false;                   // held open by ratchet: kept by inode
    bool watch_only = false;             // compared, never restored
    bool restore_only = false;           // restored, never compared (written by readers)
  };

  bool Scan(std::map<std::string, Entry>* out, bool with_content, std::string* err) const;
  bool Guarded(const std::string& rel) const;
  bool ReadEntry(const std::string& rel, const Entry& e, std::string* content) const;
  void Restore(const std::string& rel, const Entry& before, const Entry* now, GuardReport* report);
  void DropAsideLinks();

  HeldFiles* held_;
  std::string root_;
  std::vector<std::string> skip_;
  std::map<std::string, Entry> before_;
  std::map<std::string, std::string> aside_;  // rel path -> absolute aside link
};

}  // namespace ratchet
