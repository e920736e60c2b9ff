// In-memory fakes of the core ports, for policy tests: no processes, no
// git, no files, no sleeping. Real implementations are tested end to end.
#pragma once

#include <functional>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ledger.h"
#include "core/proposer.h"
#include "core/repo.h"
#include "core/runner.h"
#include "core/workspace.h"

namespace ratchet {

class FakeClock : public Clock {
 public:
  double MonotonicSeconds() override { return mono; }
  double WallSeconds() override { return wall; }
  void Advance(double seconds) {
    mono += seconds;
    wall += seconds;
  }
  double mono = 1000;
  double wall = 1.7e9;
};

using FileMap = std::map<std::string, std::string>;  // path -> content

/// A repository as maps: commits are whole trees, named "c0", "c1", ...
/// Working copies are maps too, keyed by their folder. A file whose content
/// starts with "symlink:" stands for a symbolic link (a scan problem).
class FakeRepo : public Repo {
 public:
  explicit FakeRepo(const FileMap& initial_tree);

  bool Head(std::string* sha, std::string* err) override;
  bool CurrentBranch(std::string* branch, std::string* err) override;
  bool DirtyPaths(std::vector<std::string>* paths, std::string* err) override;
  bool HasCommit(const std::string& sha, bool* exists, std::string* err) override;
  bool ResolveRef(const std::string& ref, std::string* sha, std::string* err) override;
  bool CheckoutBranch(const std::string& branch, const std::string& start,
                      std::string* err) override;
  bool SetRef(const std::string& ref, const std::string& sha, std::string* err) override;
  bool AdvanceBranch(const std::string& branch, const std::string& sha,
                     const std::string& expected_old, std::string* err) override;
  bool RestoreTo(const std::string& sha, std::string* err) override;
  bool WatchOwnedState(const std::string& branch, std::string* err) override;
  bool RestoreOwnedState(std::vector<std::string>* changes, std::string* err) override;
  bool DiffStat(const std::string& from, const std::string& to, std::string* stat,
                std::string* err) override;
  bool Diff(const std::string& from, const std::string& to, std::string* diff,
            std::string* err) override;
  bool CheckoutCopy(const std::string& sha, const std::string& dir, std::string* err) override;
  bool ScanCopy(const std::string& dir, const std::string& base, CopyScan* scan,
                std::string* err) override;
  bool CommitScan(const CopyScan& scan, const std::string& message, std::string* sha,
                  std::string* err) override;
  bool Rebase(const std::string& base, const std::string& theirs, const std::string& ours,
              const std::string& message, std::string* sha, std::string* conflict,
              std::string* err) override;

  /// The commits reachable from `ref` by first parents, newest first.
  std::vector<std::string> Log(const std::string& ref) const;
  /// How `tree` differs from commit `base`.
  std::vector<FileChange> Diff(const FileMap& tree, const std::string& base) const;

  FileMap worktree;                         // the loop directory: tracked and untracked
  std::map<std::string, FileMap> copies;    // working copies by folder
  std::map<std::string, FileMap> commits;   // sha -> tree
  std::map<std::string, std::string> parents;
  std::map<std::string, std::string> messages;
  std::map<std::string, std::string> refs;  // "refs/heads/main" -> sha
  std::string branch = "main";              // checked out
  int next_commit = 1;
  // Owned state: once watched, `refs` is expected as this repo itself last
  // set it; a test changes `refs` behind its back, or plants changes of
  // files (".git/config changed (put back)") that the next check reports.
  bool watching = false;
  std::map<std::string, std::string> expected_refs;
  std::vector<std::string> planted;
  int owned_checks = 0;

 private:
  void Own(const std::string& ref) {
    if (watching) expected_refs[ref] = refs[ref];
  }
};

/// The loop directory's other files, plus hashing over the repo's worktree
/// and `ignored` files (git-ignored, e.g. prepared data). ReadFile finds
/// the repo's worktree files too.
class FakeWorkspace : public Workspace {
 public:
  explicit FakeWorkspace(FakeRepo* repo) : repo_(repo) {}
  const std::string& root() const override { return root_; }
  void set_root(std::string root) { root_ = std::move(root); }  // a real folder, for a test
  bool HashFiles(const std::vector<std::string>& globs, std::map<std::string, std::string>* hashes,
                 std::string* err) override;
  bool ReadFile(const std::string& rel_path, std::string* content, std::string* err) override;
  bool WriteFile(const std::string& rel_path, const std::string& content,
                 std::string* err) override;
  bool AppendFile(const std::string& rel_path, const std::string& content,
                  std::string* err) override;
  bool MakeDirs(const std::string& rel_path, std::string* err) override;
  bool Exists(const std::string& rel_path) override;
  /// Removes files under rel_path and working copies at or under it.
  bool RemoveAll(const std::string& rel_path, std::string* err) override;
  /// A workspace over the working copy at root()/rel_path.
  std::unique_ptr<Workspace> Subtree(const std::string& rel_path) override;

  FileMap files;    // .ratchet/... and other untracked-by-design files
  FileMap ignored;  // git-ignored files that may be protected

 private:
  FakeRepo* repo_;
  std::string root_ = "/loop";
};

/// Steps answered by `handler` when they start (default: exit 0, no output);
/// each finishes `wall_s` of FakeClock time later, and Wait moves the clock
/// to it. Output lines reach on_line when the step is reported, except
/// progress lines with `elapsed=X` (X < wall_s): those arrive X seconds
/// after the start, while the step runs, so on_line may cancel it then.
class FakeStepRunner : public StepRunner {
 public:
  explicit FakeStepRunner(FakeClock* clock) : clock_(clock) {}
  StepId Start(const RunSpec& spec) override;
  void StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                      StepId* verifier_id, std::vector<StepId>* server_ids) override;
  bool Wait(double max_wait_s, StepId* id, RunResult* result) override;
  void Cancel(StepId id) override;
  void Wake() override {}
  size_t Running() const override { return steps_.size(); }
  bool CanReattach(const std::string& log_path) const override {
    return reattachable.count(log_path) > 0;
  }
  std::vector<std::string> EndLeftovers() override {
    ++leftovers_ended;
    return leftover_notes;
  }

  std::function<RunResult(const RunSpec&)> handler;
  /// Log paths of an earlier session's steps that CanReattach reports, and
  /// what EndLeftovers says (counted).
  std::set<std::string> reattachable;
  std::vector<std::string> leftover_notes;
  int leftovers_ended = 0;
  /// For a verifier and its (first) server started together; default:
  /// `handler` on each. Further servers get `handler`.
  std::function<std::pair<RunResult, RunResult>(const RunSpec&, const RunSpec&)> connected;
  std::vector<RunSpec> calls;  // every spec started, in order
  /// Called by Cancel before the step is reported (e.g. to count).
  int cancels = 0;

 private:
  struct Step {
    StepId id;
    double finish_at;
    RunSpec spec;
    RunResult result;
    /// Progress lines due while it runs, by time, not yet delivered.
    std::vector<std::pair<double, std::string>> timed;
    std::vector<std::string> at_end;  // every other line
  };
  StepId Queue(const RunSpec& spec, RunResult result);
  FakeClock* clock_;
  StepId next_ = 1;
  std::vector<Step> steps_;
};

/// Answers every Run with `handler` (default: exit 0, no output).
class FakeRunner : public ProcessRunner {
 public:
  RunResult Run(const RunSpec& spec) override;
  std::function<RunResult(const RunSpec&)> handler;
  std::vector<RunSpec> calls;
  /// The shell command line of a spec made with ShellCommand().
  static std::string CommandOf(const RunSpec& spec);
};

/// A result that exited with `code` after printing `output`.
RunResult Exited(int code, const std::string& output, double wall_s = 1);

class FakeLedger : public Ledger {
 public:
  bool LoadExperiments(std::vector<Experiment>* out, std::string* err) override;
  bool InsertExperiment(Experiment* exp, std::string* err) override;
  bool UpdateExperiment(const Experiment& exp, std::string* err) override;
  bool AddRun(const RunRecord& run, std::string* err) override;
  bool LoadRuns(int experiment_id, std::vector<RunRecord>* out, std::string* err) override;
  bool AddEvent(const LedgerEvent& event, std::string* err) override;
  bool LoadEvents(long long after_seq, std::vector<LedgerEvent>* out, std::string* err) override;
  bool BeginSession(const Session& session, int* id, std::string* err) override;
  bool EndSession(int id, double ended_at, const std::string& reason, std::string* err) override;
  bool LoadSessions(std::vector<Session>* out, std::string* err) override;
  bool SetMeta(const std::string& key, const std::string& value, std::string* err) override;
  bool GetMeta(const std::string& key, std::string* value, std::string* err) override;
  bool AddMechanismCalls(const std::string& mechanism, const std::string& hook, long long calls,
                         std::string* err) override;
  bool LoadMechanismCalls(std::map<std::pair<std::string, std::string>, long long>* out,
                          std::string* err) override;
  /// Returns `check`; Repair puts `written` back over `experiments` and says so.
  bool Verify(LedgerCheck* check, std::string* err) override;
  bool Repair(std::vector<std::string>* repaired, std::string* err) override;

  LedgerCheck check;                  // what Verify reports
  std::vector<Experiment> written;    // what Repair restores (when not empty)
  std::vector<Experiment> experiments;
  std::vector<RunRecord> runs;
  std::vector<LedgerEvent> events;
  std::vector<Session> sessions;
  std::map<std::string, std::string> meta;
  std::map<std::pair<std::string, std::string>, long long> mechanism_calls;
  /// Every phase each experiment was written with, in order (write-ahead checks).
  std::map<int, std::vector<Phase>> phases;
};

/// A proposer that calls `edit` (which edits the request's working copy).
class FakeProposer : public Proposer {
 public:
  std::string kind() const override { return "fake"; }
  Proposal Propose(const ProposalRequest& request) override;
  std::function<Proposal(const ProposalRequest&)> edit;
  int calls = 0;
};

}  // namespace ratchet
