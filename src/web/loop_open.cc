// OpenLoopDirectory: wires the real store, git and config into a
// LoopDirectory. Kept apart from loop_directory.cc, which tests use with fakes.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/read_file.h"
#include "core/config.h"
#include "store/live_status.h"
#include "store/sqlite_ledger.h"
#include "vcs/git_repo.h"
#include "web/loop_directory.h"

namespace ratchet {
namespace {

// The first 48 bytes of the WAL index (the -shm file) hold a counter that
// SQLite increments on every write transaction (sqlite.org/walformat.html);
// with the sizes and times of the database and its WAL, any commit changes
// this stamp. Reading it takes no lock and writes nothing.
std::string LedgerStampOf(const std::string& db) {
  std::string stamp = FileStamp(db) + "|" + FileStamp(db + "-wal") + "|";
  int fd = ::open((db + "-shm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char header[48];
    ssize_t n = ::pread(fd, header, sizeof header, 0);
    if (n > 0) stamp.append(header, static_cast<size_t>(n));
    ::close(fd);
  }
  return stamp;
}

LiveView ReadLive(const std::string& path) {
  LiveView view;
  LiveStatus live;
  std::string err;
  if (!ReadLiveStatus(path, &live, &err)) return view;
  view.present = true;
  view.pid = live.pid;
  view.session_id = live.session_id;
  view.experiment_id = live.experiment_id;
  view.phase = live.phase;
  view.phase_started_at = live.phase_started_at;
  view.run_started_at = live.run_started_at;
  view.budget_s = live.budget_s;
  view.timeout_s = live.timeout_s;
  view.progress = live.progress;
  view.updated_at = live.updated_at;
  view.stop_reason = live.stop_reason;
  return view;
}

// What the page shows of ratchet.toml; the ledger's meta when the file is
// missing or no longer parses (the dashboard should still open).
LoopSettings ReadSettings(const std::string& dir, Ledger* ledger) {
  LoopSettings settings;
  settings.name = std::filesystem::path(dir).filename().string();
  std::string text, err;
  LoopConfig config;
  if (ReadWholeFile(dir + "/ratchet.toml", &text) &&
      ParseLoopConfig(text, dir + "/ratchet.toml", &config, &err)) {
    settings.metric_name = config.metric_name;
    settings.minimize = config.goal == Goal::kMin;
    settings.target = config.target;
    settings.budget_s = config.budget_s;
    settings.timeout_s = config.timeout_s;
    settings.max_experiments = config.max_experiments;
    settings.wall_s = config.wall_s;
    settings.max_cost_usd = config.max_cost_usd;
    if (config.prune.enabled()) settings.curve_key = config.prune.value;
    return settings;
  }
  std::string value;
  if (ledger->GetMeta("metric_name", &value, &err)) settings.metric_name = value;
  if (ledger->GetMeta("goal", &value, &err)) settings.minimize = value != "max";
  return settings;
}

}  // namespace

bool OpenLoopDirectory(const std::string& dir, std::unique_ptr<LoopDirectory>* out,
                       std::string* err) {
  const std::string db = dir + "/.ratchet/ledger.db";
  if (access(db.c_str(), F_OK) != 0) {
    *err =
        dir + " has no ledger yet (.ratchet/ledger.db): `ratchet run " + dir + "` starts the loop";
    return false;
  }
  std::unique_ptr<SqliteLedger> ledger;
  if (!SqliteLedger::Open(db, /*create=*/false, /*read_only=*/true, &ledger).Report(err))
    return false;
  LoopParts parts;
  parts.dir = dir;
  parts.settings = ReadSettings(dir, ledger.get());
  parts.ledger = std::move(ledger);
  parts.ledger_stamp = [db] { return LedgerStampOf(db); };
  const std::string live = dir + "/.ratchet/live.json";
  parts.read_live = [live] { return ReadLive(live); };
  std::unique_ptr<GitRepo> repo;
  std::string git_err;
  if (GitRepo::Open(dir, &repo, &git_err)) parts.repo = std::move(repo);
  *out = std::make_unique<LoopDirectory>(std::move(parts));
  return true;
}

}  // namespace ratchet
