#include "web/loop_directory.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

namespace ratchet {
namespace {

bool IsHex(const std::string& s) {
  return s.size() >= 4 && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(c); });
}

std::string Short(const std::string& sha) { return sha.substr(0, 10); }

}  // namespace

std::string FileStamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino);
}

bool ReadTailInside(const std::string& root, const std::string& rel_path, size_t max_bytes,
                    std::string* text, bool* truncated, std::string* err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = fs::canonical(root, ec);
  if (ec) {
    *err = "cannot resolve " + root + ": " + ec.message();
    return false;
  }
  fs::path full = fs::canonical(base / rel_path, ec);
  if (ec) {
    *err = "no log at " + rel_path;
    return false;
  }
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    *err = "log path " + rel_path + " is outside the loop directory; not shown";
    return false;
  }
  std::ifstream in(full, std::ios::binary);
  if (!in || !fs::is_regular_file(full)) {
    *err = "cannot read " + rel_path;
    return false;
  }
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  text->assign(size - start, '\0');
  in.read(text->data(), static_cast<std::streamsize>(text->size()));
  text->resize(static_cast<size_t>(in.gcount()));
  *truncated = start > 0;
  if (start > 0) {
    // Start at a line boundary so the first line shown is whole.
    size_t nl = text->find('\n');
    if (nl != std::string::npos && nl + 1 < text->size()) text->erase(0, nl + 1);
  }
  return true;
}

LoopDirectory::LoopDirectory(LoopParts parts) : parts_(std::move(parts)) {}

bool LoopDirectory::LoadLedger(LedgerView* out, std::string* err) {
  return parts_.ledger->LoadExperiments(&out->experiments, err) &&
         parts_.ledger->LoadSessions(&out->sessions, err);
}

// live.json stays as it was when `ratchet run` is killed: its process
// dying is a change too.
std::string LoopDirectory::LiveStamp() {
  return FileStamp(parts_.dir + "/.ratchet/live.json") + (ProcessAlive(live_pid_) ? "+" : "-");
}

LiveView LoopDirectory::LoadLive() {
  LiveView live = parts_.read_live();
  live.alive = ProcessAlive(live.pid);
  live_pid_ = live.pid;
  return live;
}

bool ProcessAlive(long long pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

bool LoopDirectory::LoadDetail(const Experiment& exp, const Experiment* reference,
                               ExperimentDetail* out, std::string* err) {
  out->experiment = exp;
  if (!parts_.ledger->LoadRuns(exp.id, &out->runs, err)) return false;
  if (reference) {
    std::vector<RunRecord> runs;
    if (!parts_.ledger->LoadRuns(reference->id, &runs, err)) return false;
    if (const RunRecord* full = FirstFullRun(runs)) {
      out->reference_id = reference->id;
      out->reference_curve = full->curve;
    }
  }
  LoadDiff(exp, out);
  LoadLog(exp, out);
  return true;
}

void LoopDirectory::LoadDiff(const Experiment& exp, ExperimentDetail* out) {
  if (!parts_.repo) {
    out->diff_error = "no git repository at " + parts_.dir;
    return;
  }
  if (exp.candidate_commit.empty()) {
    out->diff_error = exp.baseline ? "the baseline has no change"
                                   : "no candidate commit was recorded for this experiment";
    return;
  }
  for (const std::string* sha : {&exp.parent_commit, &exp.candidate_commit}) {
    if (!IsHex(*sha)) {
      out->diff_error = "'" + *sha + "' is not a commit id; no diff to show";
      return;
    }
  }
  // libgit2 reads objects; nothing here writes to the repository.
  std::string err;
  if (!parts_.repo->Diff(exp.parent_commit, exp.candidate_commit, &out->diff, &err)) {
    out->diff.clear();
    out->diff_error = "commit " + Short(exp.parent_commit) + " or " + Short(exp.candidate_commit) +
                      " is not in the repository (garbage-collected, or a fresh clone); no "
                      "diff to show (" +
                      err + ")";
    return;
  }
  if (out->diff.size() > kDiffLimit) {
    out->diff.resize(kDiffLimit);
    out->diff_truncated = true;
  }
}

void LoopDirectory::LoadLog(const Experiment& exp, ExperimentDetail* out) {
  if (exp.log_path.empty()) {
    out->log_error = "no log recorded";
    return;
  }
  ReadTailInside(parts_.dir, exp.log_path, kLogTail, &out->log, &out->log_truncated,
                 &out->log_error);
}

}  // namespace ratchet
