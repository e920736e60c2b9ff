// The real LoopSource: a loop directory's ledger (through the Ledger port,
// opened read-only), .ratchet/live.json, run logs and git. Reads only.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/ledger.h"
#include "core/repo.h"
#include "web/loop_source.h"

namespace ratchet {

struct LoopParts {
  std::string dir;                 // the loop directory (absolute)
  std::unique_ptr<Ledger> ledger;  // opened read-only
  /// A cheap fingerprint that changes whenever the ledger is written.
  std::function<std::string()> ledger_stamp;
  /// Reads live.json (present=false when there is none); `alive` is filled
  /// in by LoopDirectory.
  std::function<LiveView()> read_live;
  std::unique_ptr<Repo> repo;  // null when the directory is not a git repository
  LoopSettings settings;
};

class LoopDirectory : public LoopSource {
 public:
  explicit LoopDirectory(LoopParts parts);

  LoopSettings Settings() override { return parts_.settings; }
  std::string LedgerStamp() override { return parts_.ledger_stamp(); }
  bool LoadLedger(LedgerView* out, std::string* err) override;
  std::string LiveStamp() override;
  LiveView LoadLive() override;
  bool LoadDetail(const Experiment& exp, const Experiment* reference, ExperimentDetail* out,
                  std::string* err) override;

  static constexpr size_t kDiffLimit = 256 << 10;
  static constexpr size_t kLogTail = 64 << 10;

 private:
  void LoadDiff(const Experiment& exp, ExperimentDetail* out);
  void LoadLog(const Experiment& exp, ExperimentDetail* out);
  LoopParts parts_;
  long long live_pid_ = 0;  // from the last LoadLive, to notice it dying
};

/// True when process `pid` exists (ours or not).
bool ProcessAlive(long long pid);

/// Size, modification time and inode of a file ("-" when it is missing):
/// enough to notice that an atomically replaced or appended file changed.
std::string FileStamp(const std::string& path);

/// The last `max_bytes` of a file inside `root`. The path is resolved (links
/// included) and refused unless it stays inside `root`: a ledger row cannot
/// make the dashboard read an arbitrary file.
bool ReadTailInside(const std::string& root, const std::string& rel_path, size_t max_bytes,
                    std::string* text, bool* truncated, std::string* err);

/// Opens `dir` for the dashboard: the ledger read-only (never created or
/// modified), git if present, settings from ratchet.toml and the ledger's
/// meta. False with a message a user can act on (e.g. no ledger yet).
bool OpenLoopDirectory(const std::string& dir, std::unique_ptr<LoopDirectory>* out,
                       std::string* err);

}  // namespace ratchet
