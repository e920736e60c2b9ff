#include "core/testing/fakes.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/glob.h"

namespace ratchet {

FakeRepo::FakeRepo(const FileMap& initial_tree) {
  commits["c0"] = initial_tree;
  messages["c0"] = "initial";
  refs["refs/heads/main"] = "c0";
  worktree = initial_tree;
}

bool FakeRepo::Head(std::string* sha, std::string*) {
  *sha = refs["refs/heads/" + branch];
  return true;
}

bool FakeRepo::CurrentBranch(std::string* out, std::string*) {
  *out = branch;
  return true;
}

bool FakeRepo::DirtyPaths(std::vector<std::string>* paths, std::string*) {
  paths->clear();
  for (const FileChange& c : Diff(worktree, refs["refs/heads/" + branch])) paths->push_back(c.path);
  return true;
}

bool FakeRepo::HasCommit(const std::string& sha, bool* exists, std::string*) {
  *exists = commits.count(sha) > 0;
  return true;
}

bool FakeRepo::ResolveRef(const std::string& ref, std::string* sha, std::string*) {
  auto it = refs.find(ref);
  *sha = it == refs.end() ? "" : it->second;
  return true;
}

bool FakeRepo::CheckoutBranch(const std::string& name, const std::string& start,
                              std::string* err) {
  if (!refs.count("refs/heads/" + name)) {
    if (!commits.count(start)) {
      *err = "no commit " + start;
      return false;
    }
    refs["refs/heads/" + name] = start;
    Own("refs/heads/" + name);
  }
  branch = name;
  return true;
}

bool FakeRepo::WatchOwnedState(const std::string&, std::string*) {
  watching = true;
  expected_refs = refs;
  return true;
}

bool FakeRepo::RestoreOwnedState(std::vector<std::string>* changes, std::string*) {
  ++owned_checks;
  changes->clear();
  if (!watching) return true;
  for (const auto& [ref, sha] : refs)
    if (!expected_refs.count(ref)) changes->push_back(ref + " added (removed)");
  for (const auto& [ref, sha] : expected_refs) {
    auto now = refs.find(ref);
    if (now == refs.end())
      changes->push_back(ref + " deleted (put back)");
    else if (now->second != sha)
      changes->push_back(ref + " moved to " + now->second + " (put back)");
  }
  refs = expected_refs;
  changes->insert(changes->end(), planted.begin(), planted.end());
  planted.clear();
  return true;
}

std::vector<FileChange> FakeRepo::Diff(const FileMap& tree, const std::string& base) const {
  std::vector<FileChange> changes;
  auto it = commits.find(base);
  static const FileMap kEmpty;
  const FileMap& old_tree = it == commits.end() ? kEmpty : it->second;
  for (const auto& [path, content] : tree) {
    auto old = old_tree.find(path);
    if (old != old_tree.end() && old->second == content) continue;
    FileChange c{old == old_tree.end() ? FileChange::Kind::kAdded : FileChange::Kind::kModified,
                 path};
    if (content.rfind("symlink:", 0) == 0)
      c.problem = "is a symbolic link (to " + content.substr(8) + ")";
    changes.push_back(c);
  }
  for (const auto& [path, content] : old_tree)
    if (!tree.count(path)) changes.push_back({FileChange::Kind::kDeleted, path});
  std::sort(changes.begin(), changes.end(),
            [](const FileChange& a, const FileChange& b) { return a.path < b.path; });
  return changes;
}

bool FakeRepo::CheckoutCopy(const std::string& sha, const std::string& dir, std::string* err) {
  auto it = commits.find(sha);
  if (it == commits.end()) {
    *err = "no commit " + sha;
    return false;
  }
  if (copies.count(dir)) {
    *err = dir + " exists";
    return false;
  }
  copies[dir] = it->second;
  return true;
}

bool FakeRepo::ScanCopy(const std::string& dir, const std::string& base, CopyScan* scan,
                        std::string* err) {
  auto it = copies.find(dir);
  if (it == copies.end() || !commits.count(base)) {
    *err = "no copy " + dir + " or no commit " + base;
    return false;
  }
  *scan = CopyScan();
  scan->base = base;
  scan->changes = Diff(it->second, base);
  for (const FileChange& c : scan->changes)
    if (c.kind != FileChange::Kind::kDeleted && c.problem.empty())
      scan->contents[c.path] = {it->second.at(c.path), false};
  return true;
}

bool FakeRepo::CommitScan(const CopyScan& scan, const std::string& message, std::string* sha,
                          std::string* err) {
  FileMap tree = commits[scan.base];
  for (const FileChange& c : scan.changes) {
    if (!c.problem.empty()) {
      *err = "cannot commit " + c.path + ": it " + c.problem;
      return false;
    }
    if (c.kind == FileChange::Kind::kDeleted) tree.erase(c.path);
    else tree[c.path] = scan.contents.at(c.path).bytes;
  }
  *sha = "c" + std::to_string(next_commit++);
  commits[*sha] = tree;
  parents[*sha] = scan.base;
  messages[*sha] = message;
  return true;
}

bool FakeRepo::Rebase(const std::string& base, const std::string& theirs, const std::string& ours,
                      const std::string& message, std::string* sha, std::string* conflict,
                      std::string*) {
  const FileMap& b = commits[base];
  const FileMap& t = commits[theirs];
  FileMap merged = commits[ours];
  sha->clear();
  conflict->clear();
  static const std::string kAbsent = "(absent)";
  std::set<std::string> paths;
  for (const FileMap* m : {&b, &t}) for (const auto& [p, c] : *m) paths.insert(p);
  for (const std::string& p : paths) {
    auto get = [&](const FileMap& m) { auto it = m.find(p); return it == m.end() ? std::string(kAbsent) : it->second; };
    const std::string bv = get(b), tv = get(t), ov = get(commits[ours]);
    if (tv == bv) continue;                  // theirs did not touch it
    if (ov != bv && ov != tv) {              // both changed it differently
      *conflict = p;
      return true;
    }
    if (tv == kAbsent) merged.erase(p);
    else merged[p] = tv;
  }
  *sha = "c" + std::to_string(next_commit++);
  commits[*sha] = merged;
  parents[*sha] = ours;
  messages[*sha] = message;
  return true;
}

bool FakeRepo::SetRef(const std::string& ref, const std::string& sha, std::string*) {
  refs[ref] = sha;
  Own(ref);
  return true;
}

bool FakeRepo::AdvanceBranch(const std::string& name, const std::string& sha,
                             const std::string& expected_old, std::string* err) {
  std::string& ref = refs["refs/heads/" + name];
  if (ref != expected_old) {
    *err = "branch " + name + " moved";
    return false;
  }
  ref = sha;
  Own("refs/heads/" + name);
  worktree = commits[sha];
  return true;
}

bool FakeRepo::RestoreTo(const std::string& sha, std::string* err) {
  if (!commits.count(sha)) {
    *err = "no commit " + sha;
    return false;
  }
  refs["refs/heads/" + branch] = sha;
  Own("refs/heads/" + branch);
  worktree = commits[sha];
  return true;
}

bool FakeRepo::DiffStat(const std::string& from, const std::string& to, std::string* stat,
                        std::string*) {
  *stat = from + ".." + to;
  return true;
}

bool FakeRepo::Diff(const std::string& from, const std::string& to, std::string* diff,
                    std::string*) {
  *diff = "diff " + from + " " + to;
  return true;
}

std::vector<std::string> FakeRepo::Log(const std::string& ref) const {
  std::vector<std::string> out;
  auto it = refs.find(ref);
  std::string sha = it == refs.end() ? "" : it->second;
  while (!sha.empty()) {
    out.push_back(sha);
    auto p = parents.find(sha);
    sha = p == parents.end() ? "" : p->second;
  }
  return out;
}

bool FakeWorkspace::HashFiles(const std::vector<std::string>& globs,
                              std::map<std::string, std::string>* hashes, std::string*) {
  hashes->clear();
  for (const FileMap* files : {&repo_->worktree, &ignored})
    for (const auto& [path, content] : *files)
      if (MatchesAny(globs, path)) (*hashes)[path] = "hash:" + content;
  return true;
}

bool FakeWorkspace::ReadFile(const std::string& rel_path, std::string* content,
                             std::string* err) {
  for (const FileMap* map : {&files, &repo_->worktree}) {  // then a tracked file
    auto it = map->find(rel_path);
    if (it == map->end()) continue;
    *content = it->second;
    return true;
  }
  *err = rel_path + ": no such file";
  return false;
}

bool FakeWorkspace::WriteFile(const std::string& rel_path, const std::string& content,
                              std::string*) {
  files[rel_path] = content;
  return true;
}

bool FakeWorkspace::AppendFile(const std::string& rel_path, const std::string& content,
                               std::string*) {
  files[rel_path] += content;
  return true;
}

bool FakeWorkspace::MakeDirs(const std::string&, std::string*) { return true; }
bool FakeWorkspace::Exists(const std::string& rel_path) {
  return files.count(rel_path) > 0 || repo_->copies.count(root_ + "/" + rel_path) > 0;
}

bool FakeWorkspace::RemoveAll(const std::string& rel_path, std::string*) {
  const std::string abs = root_ + "/" + rel_path;
  for (auto it = repo_->copies.begin(); it != repo_->copies.end();) {
    if (it->first == abs || it->first.rfind(abs + "/", 0) == 0) it = repo_->copies.erase(it);
    else ++it;
  }
  for (auto it = files.begin(); it != files.end();) {
    if (it->first == rel_path || it->first.rfind(rel_path + "/", 0) == 0) it = files.erase(it);
    else ++it;
  }
  return true;
}

namespace {

// The files of one working copy of a FakeRepo, as a Workspace.
class FakeCopyWorkspace : public Workspace {
 public:
  FakeCopyWorkspace(FakeRepo* repo, std::string root) : repo_(repo), root_(std::move(root)) {}
  const std::string& root() const override { return root_; }
  bool HashFiles(const std::vector<std::string>& globs, std::map<std::string, std::string>* hashes,
                 std::string*) override {
    hashes->clear();
    for (const auto& [path, content] : Files())
      if (MatchesAny(globs, path)) (*hashes)[path] = "hash:" + content;
    return true;
  }
  bool ReadFile(const std::string& rel, std::string* content, std::string* err) override {
    auto it = Files().find(rel);
    if (it == Files().end()) {
      *err = rel + ": no such file";
      return false;
    }
    *content = it->second;
    return true;
  }
  bool WriteFile(const std::string& rel, const std::string& content, std::string*) override {
    Files()[rel] = content;
    return true;
  }
  bool AppendFile(const std::string& rel, const std::string& content, std::string*) override {
    Files()[rel] += content;
    return true;
  }
  bool MakeDirs(const std::string&, std::string*) override { return true; }
  bool Exists(const std::string& rel) override { return Files().count(rel) > 0; }
  bool RemoveAll(const std::string& rel, std::string*) override {
    Files().erase(rel);
    return true;
  }
  std::unique_ptr<Workspace> Subtree(const std::string& rel) override {
    return std::make_unique<FakeCopyWorkspace>(repo_, root_ + "/" + rel);
  }

 private:
  FileMap& Files() { return repo_->copies[root_]; }
  FakeRepo* repo_;
  std::string root_;
};

}  // namespace

std::unique_ptr<Workspace> FakeWorkspace::Subtree(const std::string& rel_path) {
  return std::make_unique<FakeCopyWorkspace>(repo_, root_ + "/" + rel_path);
}

StepRunner::StepId FakeStepRunner::Queue(const RunSpec& spec, RunResult result) {
  const double start = clock_->mono;
  Step step{next_++, start + std::max(0.0, result.wall_s), spec, std::move(result), {}, {}};
  // Progress lines with elapsed=X come X seconds in; the rest at the end.
  size_t from = 0;
  const std::string& tail = step.result.tail;
  while (from < tail.size()) {
    size_t end = tail.find('\n', from);
    if (end == std::string::npos) end = tail.size();
    std::string line = tail.substr(from, end - from);
    from = end + 1;
    size_t at = line.find("elapsed=");
    double elapsed = at == std::string::npos ? -1 : std::atof(line.c_str() + at + 8);
    if (line.rfind("progress:", 0) == 0 && elapsed >= 0 && elapsed < step.result.wall_s)
      step.timed.emplace_back(start + elapsed, line);
    else
      step.at_end.push_back(line);
  }
  std::stable_sort(step.timed.begin(), step.timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  steps_.push_back(step);
  return step.id;
}

StepRunner::StepId FakeStepRunner::Start(const RunSpec& spec) {
  calls.push_back(spec);
  return Queue(spec, handler ? handler(spec) : Exited(0, ""));
}

void FakeStepRunner::StartConnected(const RunSpec& verifier, const std::vector<RunSpec>& servers,
                                    StepId* verifier_id, std::vector<StepId>* server_ids) {
  calls.push_back(verifier);
  for (const RunSpec& s : servers) calls.push_back(s);
  std::pair<RunResult, RunResult> first;
  if (connected && !servers.empty()) {
    first = connected(verifier, servers[0]);
  } else {
    first.first = handler ? handler(verifier) : Exited(0, "");
    if (!servers.empty()) first.second = handler ? handler(servers[0]) : Exited(0, "");
  }
  *verifier_id = Queue(verifier, first.first);
  server_ids->clear();
  for (size_t k = 0; k < servers.size(); ++k)
    server_ids->push_back(
        Queue(servers[k], k == 0 ? first.second : handler ? handler(servers[k]) : Exited(0, "")));
}

bool FakeStepRunner::Wait(double max_wait_s, StepId* id, RunResult* result) {
  const double until = clock_->mono + max_wait_s;
  for (;;) {
    // The next progress line due before its step ends, within this wait.
    Step* due = nullptr;
    for (Step& step : steps_)
      if (!step.timed.empty() && step.timed.front().first < step.finish_at &&
          step.timed.front().first <= until &&
          (!due || step.timed.front().first < due->timed.front().first))
        due = &step;
    double first_finish = until + 1;
    for (const Step& step : steps_) first_finish = std::min(first_finish, step.finish_at);
    if (!due || due->timed.front().first > first_finish) break;
    auto [at, line] = due->timed.front();
    due->timed.erase(due->timed.begin());
    if (at > clock_->mono) clock_->Advance(at - clock_->mono);
    if (due->spec.on_line) {
      auto on_line = due->spec.on_line;  // it may Cancel (and so touch steps_)
      on_line(line);
    }
  }
  max_wait_s = std::max(0.0, until - clock_->mono);
  if (steps_.empty()) {
    clock_->Advance(max_wait_s);
    return false;
  }
  auto first = std::min_element(steps_.begin(), steps_.end(), [](const Step& a, const Step& b) {
    return a.finish_at < b.finish_at || (a.finish_at == b.finish_at && a.id < b.id);
  });
  if (first->finish_at > clock_->mono + max_wait_s) {
    clock_->Advance(max_wait_s);  // nothing finishes within this wait
    return false;
  }
  Step step = *first;
  steps_.erase(first);
  if (step.finish_at > clock_->mono) clock_->Advance(step.finish_at - clock_->mono);
  if (step.spec.on_line && step.result.end != RunResult::End::kCancelled)
    for (const std::string& line : step.at_end) step.spec.on_line(line);
  *id = step.id;
  *result = step.result;
  return true;
}

void FakeStepRunner::Cancel(StepId id) {
  for (Step& step : steps_) {
    if (step.id != id || step.result.end == RunResult::End::kCancelled) continue;
    ++cancels;
    step.result = RunResult();
    step.result.end = RunResult::End::kCancelled;
    step.finish_at = clock_->mono;
  }
}

RunResult FakeRunner::Run(const RunSpec& spec) {
  calls.push_back(spec);
  if (handler) return handler(spec);
  return Exited(0, "");
}

std::string FakeRunner::CommandOf(const RunSpec& spec) {
  return spec.argv.size() == 3 && spec.argv[0] == "/bin/sh" ? spec.argv[2] : spec.argv.at(0);
}

RunResult Exited(int code, const std::string& output, double wall_s) {
  RunResult r;
  r.end = RunResult::End::kExited;
  r.exit_code = code;
  r.tail = output;
  r.output_bytes = output.size();
  r.wall_s = wall_s;
  r.cpu_s = wall_s;
  return r;
}

bool FakeLedger::LoadExperiments(std::vector<Experiment>* out, std::string*) {
  *out = experiments;
  return true;
}

bool FakeLedger::InsertExperiment(Experiment* exp, std::string*) {
  exp->id = static_cast<int>(experiments.size()) + 1;
  experiments.push_back(*exp);
  phases[exp->id].push_back(exp->phase);
  return true;
}

bool FakeLedger::UpdateExperiment(const Experiment& exp, std::string* err) {
  if (exp.id < 1 || exp.id > static_cast<int>(experiments.size())) {
    *err = "no experiment " + std::to_string(exp.id);
    return false;
  }
  experiments[exp.id - 1] = exp;
  phases[exp.id].push_back(exp.phase);
  return true;
}

bool FakeLedger::AddRun(const RunRecord& run, std::string*) {
  runs.push_back(run);
  return true;
}

bool FakeLedger::LoadRuns(int experiment_id, std::vector<RunRecord>* out, std::string*) {
  out->clear();
  for (const RunRecord& r : runs)
    if (r.experiment_id == experiment_id) out->push_back(r);
  return true;
}

bool FakeLedger::AddEvent(const LedgerEvent& event, std::string*) {
  events.push_back(event);
  events.back().seq = static_cast<long long>(events.size());
  return true;
}

bool FakeLedger::LoadEvents(long long after_seq, std::vector<LedgerEvent>* out, std::string*) {
  out->clear();
  for (const LedgerEvent& e : events)
    if (e.seq > after_seq) out->push_back(e);
  return true;
}

bool FakeLedger::BeginSession(const Session& session, int* id, std::string*) {
  sessions.push_back(session);
  *id = sessions.back().id = static_cast<int>(sessions.size());
  return true;
}

bool FakeLedger::EndSession(int id, double ended_at, const std::string& reason, std::string*) {
  sessions.at(id - 1).ended_at = ended_at;
  sessions.at(id - 1).stop_reason = reason;
  return true;
}

bool FakeLedger::LoadSessions(std::vector<Session>* out, std::string*) {
  *out = sessions;
  return true;
}

bool FakeLedger::SetMeta(const std::string& key, const std::string& value, std::string*) {
  meta[key] = value;
  return true;
}

bool FakeLedger::GetMeta(const std::string& key, std::string* value, std::string*) {
  auto it = meta.find(key);
  *value = it == meta.end() ? "" : it->second;
  return true;
}

bool FakeLedger::AddMechanismCalls(const std::string& mechanism, const std::string& hook,
                                   long long calls, std::string*) {
  mechanism_calls[{mechanism, hook}] += calls;
  return true;
}

bool FakeLedger::LoadMechanismCalls(std::map<std::pair<std::string, std::string>, long long>* out,
                                    std::string*) {
  *out = mechanism_calls;
  return true;
}

bool FakeLedger::Verify(LedgerCheck* out, std::string*) {
  *out = check;
  return true;
}

bool FakeLedger::Repair(std::vector<std::string>* repaired, std::string*) {
  repaired->clear();
  if (written.empty()) return true;
  for (const Experiment& e : written) {
    if (e.id >= 1 && e.id <= static_cast<int>(experiments.size())) experiments[e.id - 1] = e;
    repaired->push_back("experiment " + std::to_string(e.id));
  }
  check = LedgerCheck();
  return true;
}

Proposal FakeProposer::Propose(const ProposalRequest& request) {
  ++calls;
  if (edit) return edit(request);
  Proposal p;
  p.outcome = Proposal::Outcome::kNoChange;
  return p;
}

}  // namespace ratchet
