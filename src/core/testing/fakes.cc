#include "core/testing/fakes.h"

#include <algorithm>

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

bool FakeRepo::DirtyPaths(std::vector<std::string>* paths, std::string* err) {
  std::vector<FileChange> changes;
  if (!Changes(refs["refs/heads/" + branch], &changes, err)) return false;
  paths->clear();
  for (const FileChange& c : changes) paths->push_back(c.path);
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
  }
  branch = name;
  return true;
}

bool FakeRepo::Changes(const std::string& base, std::vector<FileChange>* changes,
                       std::string* err) {
  auto it = commits.find(base);
  if (it == commits.end()) {
    *err = "no commit " + base;
    return false;
  }
  changes->clear();
  for (const auto& [path, content] : worktree) {
    auto old = it->second.find(path);
    if (old == it->second.end()) changes->push_back({FileChange::Kind::kAdded, path});
    else if (old->second != content) changes->push_back({FileChange::Kind::kModified, path});
  }
  for (const auto& [path, content] : it->second)
    if (!worktree.count(path)) changes->push_back({FileChange::Kind::kDeleted, path});
  std::sort(changes->begin(), changes->end(),
            [](const FileChange& a, const FileChange& b) { return a.path < b.path; });
  return true;
}

bool FakeRepo::CommitWorktree(const std::string& parent, const std::string& message,
                              std::string* sha, std::string*) {
  *sha = "c" + std::to_string(next_commit++);
  commits[*sha] = worktree;
  parents[*sha] = parent;
  messages[*sha] = message;
  return true;
}

bool FakeRepo::SetRef(const std::string& ref, const std::string& sha, std::string*) {
  refs[ref] = sha;
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
  worktree = commits[sha];
  return true;
}

bool FakeRepo::RestoreTo(const std::string& sha, std::string* err) {
  if (!commits.count(sha)) {
    *err = "no commit " + sha;
    return false;
  }
  refs["refs/heads/" + branch] = sha;
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
  auto it = files.find(rel_path);
  if (it == files.end()) {
    *err = rel_path + ": no such file";
    return false;
  }
  *content = it->second;
  return true;
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
bool FakeWorkspace::Exists(const std::string& rel_path) { return files.count(rel_path) > 0; }

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

bool FakeLedger::InsertExperiment(const Experiment& exp, std::string* err) {
  if (exp.id != static_cast<int>(experiments.size()) + 1) {
    *err = "id " + std::to_string(exp.id) + " is not the next id";
    return false;
  }
  experiments.push_back(exp);
  phases[exp.id].push_back(exp.phase);
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

Proposal FakeProposer::Propose(const ProposalRequest& request) {
  ++calls;
  if (edit) return edit(request);
  Proposal p;
  p.outcome = Proposal::Outcome::kNoChange;
  return p;
}

}  // namespace ratchet
