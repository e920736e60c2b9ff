#include "core/audit.h"

#include <map>
#include <nlohmann/json.hpp>

#include "core/accept.h"
#include "core/metrics.h"
#include "core/scope.h"
#include "core/step_specs.h"

namespace ratchet {
namespace {

constexpr double kWaitSlice = 0.25;

std::string Short(const std::string& sha) { return sha.substr(0, 7); }

// Runs one step to its end (the audit does one thing at a time).
RunResult RunStep(StepRunner* steps, const RunSpec& spec) {
  const StepRunner::StepId id = steps->Start(spec);
  StepRunner::StepId done = 0;
  RunResult result;
  while (!steps->Wait(kWaitSlice, &done, &result) || done != id) {
  }
  return result;
}

// Scores keep `e` again on the audit split from a fresh build of its commit.
void Rescore(const LoopConfig& config, const AuditDeps& deps, const Experiment& e,
             AuditedKeep* keep) {
  ExperimentPaths paths;
  paths.loop = deps.workspace->root();
  paths.copy = paths.loop + "/.ratchet/audit/" + std::to_string(e.id);
  paths.run_dir = paths.loop + "/.ratchet/runs/" + std::to_string(e.id);
  SandboxPlan plan;
  plan.use = deps.sandbox;
  plan.home = deps.home;
  const std::string rel = ".ratchet/audit/" + std::to_string(e.id);
  std::string err;
  if (!deps.workspace->RemoveAll(rel, &err) || !deps.workspace->MakeDirs(".ratchet/audit", &err) ||
      !deps.repo->CheckoutCopy(e.candidate_commit, paths.copy, &err)) {
    keep->problem = "cannot check out " + Short(e.candidate_commit) + ": " + err;
    return;
  }
  auto spec = [&](StepKind kind, const std::string& name, const std::string& command,
                  double timeout) {
    StepRequest step;
    step.kind = kind;
    step.name = name;
    step.command = command;
    step.timeout_s = timeout;
    step.split = "audit";
    step.servers = kind == StepKind::kTrusted ? config.verify.servers : 1;
    RunSpec s = StepSpec(config, e, paths, step, plan);
    if (!s.sandbox.home.empty()) {
      std::string ignored;
      deps.workspace->MakeDirs(s.sandbox.home.substr(paths.loop.size() + 1), &ignored);
    }
    return s;
  };
  if (!config.build.empty()) {
    RunResult built = RunStep(deps.steps, spec(StepKind::kBuild, "audit-build", config.build,
                                               config.build_timeout_s));
    if (!built.ok()) {
      keep->problem = "the rebuild of " + Short(e.candidate_commit) + " failed: " +
                      built.Describe() + " (log: .ratchet/runs/" + std::to_string(e.id) +
                      "/audit-build.log)";
      deps.workspace->RemoveAll(rel, &err);
      return;
    }
  }
  RunResult verified;
  RunSpec verifier =
      spec(StepKind::kTrusted, "audit-verify", config.verify.command, config.verify.timeout_s);
  if (config.verify.serve.empty()) {
    verified = RunStep(deps.steps, verifier);
  } else {
    StepRunner::StepId v = 0;
    std::vector<RunSpec> servers;
    for (int k = 0; k < config.verify.servers; ++k)
      servers.push_back(spec(StepKind::kServe, "audit-serve" + (k ? "-" + std::to_string(k + 1) : ""),
                             config.verify.serve, config.verify.timeout_s));
    std::vector<StepRunner::StepId> ids;
    deps.steps->StartConnected(verifier, servers, &v, &ids);
    for (size_t pending = ids.size() + 1; pending > 0;) {
      StepRunner::StepId done = 0;
      RunResult result;
      if (!deps.steps->Wait(kWaitSlice, &done, &result)) continue;
      if (done == v) verified = result;
      --pending;
    }
  }
  deps.workspace->RemoveAll(rel, &err);
  std::map<std::string, double> summary = ParseSummary(verified.tail);
  auto it = summary.find(config.metric_name);
  if (!verified.ok() || it == summary.end()) {
    keep->problem = "the verifier " + (verified.ok() ? "printed no " + config.metric_name
                                                      : verified.Describe()) +
                    " on the audit split (log: .ratchet/runs/" + std::to_string(e.id) +
                    "/audit-verify.log)";
    return;
  }
  keep->audit = it->second;
}

}  // namespace

bool AuditReport::ok() const {
  // Unauthenticated entries cannot be told from forged ones.
  if (!ledger.ok() || ledger.foreign_entries > 0 || !missing_commits.empty()) return false;
  for (const AuditedKeep& k : keeps)
    if (!k.protected_ok || !k.problem.empty()) return false;
  return true;
}

std::string AuditReport::Json(const std::string& metric_name) const {
  using nlohmann::json;
  auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json keeps_json = json::array();
  for (const AuditedKeep& k : keeps) {
    keeps_json.push_back({{"id", k.id},
                          {"parent", k.parent_id},
                          {"commit", k.commit},
                          {"val", number(k.val)},
                          {"audit", number(k.audit)},
                          {"protected_ok", k.protected_ok},
                          {"worse_than_parent", k.worse_than_parent},
                          {"problem", k.problem}});
  }
  json j = {
      {"ok", ok()},
      {"metric", metric_name},
      {"ledger",
       {{"entries", ledger.entries},
        {"authenticated", ledger.authenticated},
        {"key_note", ledger.key_note},
        {"foreign_entries", ledger.foreign_entries},
        {"journal_problems", ledger.journal_problems},
        {"row_problems", ledger.row_problems}}},
      {"tried_commits", {{"checked", tried_commits}, {"missing", missing_commits}}},
      {"rescored", rescored},
      {"rescore_note", rescore_note},
      {"keeps", keeps_json},
  };
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

bool RunAudit(const LoopConfig& config, const AuditDeps& deps, bool rescore, AuditReport* report,
              std::string* err) {
  *report = AuditReport();
  if (!deps.ledger->Verify(&report->ledger, err)) return false;
  std::vector<Experiment> history;
  if (!deps.ledger->LoadExperiments(&history, err)) return false;

  // Nothing tried is lost: every candidate commit exists, and its tried ref
  // still points at it.
  for (const Experiment& e : history) {
    if (e.candidate_commit.empty() || e.baseline) continue;
    ++report->tried_commits;
    bool exists = false;
    if (!deps.repo->HasCommit(e.candidate_commit, &exists, err)) return false;
    std::string ref_sha;
    const std::string ref = "refs/ratchet/tried/" + std::to_string(e.id);
    if (!deps.repo->ResolveRef(ref, &ref_sha, err)) return false;
    const std::string tried = e.tried_commit.empty() ? e.candidate_commit : e.tried_commit;
    if (!exists)
      report->missing_commits.push_back("#" + std::to_string(e.id) + " " + Short(e.candidate_commit) +
                                        " (the commit is gone)");
    else if (ref_sha != tried)
      report->missing_commits.push_back("#" + std::to_string(e.id) + " " + Short(tried) + " (" +
                                        ref + (ref_sha.empty() ? " was deleted)" : " was moved)"));
  }

  // The protected files of every keep are the loop's (those the baseline's
  // commit tracks; git-ignored ones are checked by the engine itself).
  std::string text;
  if (!deps.ledger->GetMeta("protected_hashes", &text, err)) return false;
  std::map<std::string, std::string> recorded;
  nlohmann::json j = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, false);
  if (j.is_object())
    for (auto& [path, hash] : j.items())
      if (hash.is_string()) recorded[path] = hash.get<std::string>();
  std::map<std::string, std::string> tracked;  // from the baseline's commit
  int parent = 0;
  for (const Experiment& e : history) {
    if (e.status != Status::kKeep || e.phase != Phase::kDone) continue;
    AuditedKeep keep;
    keep.id = e.id;
    keep.parent_id = parent;
    keep.commit = e.candidate_commit;
    keep.val = e.metric;
    const std::string rel = ".ratchet/audit/hash-" + std::to_string(e.id);
    std::map<std::string, std::string> now;
    if (!deps.workspace->MakeDirs(".ratchet/audit", err) || !deps.workspace->RemoveAll(rel, err) ||
        !deps.repo->CheckoutCopy(e.candidate_commit, deps.workspace->root() + "/" + rel, err) ||
        !deps.workspace->Subtree(rel)->HashFiles(config.protected_files, &now, err) ||
        !deps.workspace->RemoveAll(rel, err)) {
      keep.problem = "cannot read commit " + Short(e.candidate_commit) + ": " + *err;
      err->clear();
    } else {
      if (e.baseline) {
        for (const auto& [path, hash] : recorded)
          if (now.count(path)) tracked[path] = hash;
      }
      std::string problem = CompareProtectedHashes(tracked, now);
      if (!problem.empty()) {
        keep.protected_ok = false;
        keep.problem = problem + " in kept commit " + Short(e.candidate_commit);
      }
    }
    report->keeps.push_back(keep);
    parent = e.id;
  }

  if (!rescore) {
    report->rescore_note = "not asked (--no-rescore)";
    return true;
  }
  if (config.verify.command.empty()) {
    report->rescore_note = "the loop has no [verify] step to score the audit split with";
    return true;
  }
  report->rescored = true;
  std::map<int, const AuditedKeep*> by_id;
  for (AuditedKeep& keep : report->keeps) {
    const Experiment* e = nullptr;
    for (const Experiment& x : history)
      if (x.id == keep.id) e = &x;
    if (keep.problem.empty() && e) Rescore(config, deps, *e, &keep);
    auto parent_it = by_id.find(keep.parent_id);
    if (parent_it != by_id.end() && parent_it->second->audit && keep.audit)
      keep.worse_than_parent = config.Better(*parent_it->second->audit, *keep.audit);
    by_id[keep.id] = &keep;
  }
  return true;
}

}  // namespace ratchet
