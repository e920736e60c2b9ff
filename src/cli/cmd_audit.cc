// `ratchet audit DIR`: checks a loop without trusting its own log (see
// core/audit.h): the ledger's journal, every tried commit, the protected
// files of every keep, and every keep scored again on the audit split.
// Exit status: 0 when everything holds, 1 when something does not (or the
// audit could not be done), 2 for bad arguments or a loop it cannot read.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "core/accept.h"
#include "core/audit.h"
#include "exec/step_runner.h"
#include "exec/system_clock.h"
#include "store/sqlite_ledger.h"
#include "vcs/git_repo.h"
#include "vcs/workspace_fs.h"

namespace ratchet {
namespace {

constexpr int kAuditOk = 0, kAuditFound = 1, kAuditBadInput = 2;

struct AuditOptions {
  std::string dir;
  bool no_rescore = false;
  bool json = false;
};

std::string Value(const std::optional<double>& v) { return v ? FormatMetric(*v) : "-"; }

void PrintReport(const AuditReport& r, const std::string& metric) {
  std::printf("ledger:  %lld journal entries, %s\n", r.ledger.entries,
              r.ledger.authenticated ? "MACs checked" : ("MACs not checked: " + r.ledger.key_note).c_str());
  if (r.ledger.authenticated && !r.ledger.key_note.empty())
    std::printf("  note:    %s\n", r.ledger.key_note.c_str());
  for (const std::string& p : r.ledger.journal_problems) std::printf("  journal: %s\n", p.c_str());
  for (const std::string& p : r.ledger.row_problems) std::printf("  row:     %s\n", p.c_str());
  std::printf("commits: %d tried, %zu missing\n", r.tried_commits, r.missing_commits.size());
  for (const std::string& m : r.missing_commits) std::printf("  missing: %s\n", m.c_str());
  std::printf("keeps:   %zu%s\n", r.keeps.size(),
              r.rescored ? (", re-scored on the audit split (" + metric + ")").c_str()
                         : (" (not re-scored: " + r.rescore_note + ")").c_str());
  for (const AuditedKeep& k : r.keeps) {
    std::printf("  #%-4d %s  val %s  audit %s%s%s%s\n", k.id, Short(k.commit).c_str(),
                Value(k.val).c_str(), Value(k.audit).c_str(),
                k.protected_ok ? "" : "  PROTECTED FILES CHANGED",
                k.worse_than_parent ? "  worse than its parent on audit" : "",
                k.problem.empty() ? "" : ("  " + k.problem).c_str());
  }
  std::printf("%s\n", r.ok() ? "audit: ok" : "audit: PROBLEMS FOUND");
}

int Audit(const AuditOptions& options) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(options.dir, &paths, &err)) return Fail(err, kAuditBadInput);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err, kAuditBadInput);
  std::unique_ptr<SqliteLedger> ledger;
  if (const Error opened = OpenLedgerReadOnly(paths, &ledger); !opened.ok()) {
    // A ledger SQLite finds damaged is what an audit is for (as a row that
    // fails to load later is); a missing or newer one is bad input.
    if (opened.Is(Error::Kind::kCorruption))
      return Fail("audit: the ledger is damaged: " + opened.message(), kAuditFound);
    return Fail(opened.message(), kAuditBadInput);
  }
  std::unique_ptr<GitRepo> repo;
  if (!GitRepo::Open(paths.dir, &repo, &err)) return Fail(err, kAuditBadInput);
  FsWorkspace workspace(paths.dir);
  LocalStepRunner steps;

  AuditDeps deps;
  deps.ledger = ledger.get();
  deps.repo = repo.get();
  deps.workspace = &workspace;
  deps.steps = &steps;
  deps.clock = SystemClock();
  std::string why;
  deps.sandbox = steps.SandboxAvailable(&why);
  const bool rescore = !options.no_rescore;
  // The rebuild and the model server are the candidate's code: the same
  // rule as `ratchet run`.
  if (rescore && !deps.sandbox && config.sandbox.required)
    return Fail("the sandbox for untrusted steps does not work here (" + why +
                    "); re-scoring builds and runs each keep's code: fix that, set [sandbox] "
                    "required = false, or audit with --no-rescore",
                kAuditBadInput);
  if (const char* home = std::getenv("HOME")) deps.home = home;

  AuditReport report;
  if (!RunAudit(config, deps, rescore, &report, &err)) return Fail(err, kAuditFound);
  if (options.json) {
    std::fputs(report.Json(config.metric_name).c_str(), stdout);
  } else {
    PrintReport(report, config.metric_name);
  }
  return report.ok() ? kAuditOk : kAuditFound;
}

}  // namespace

void AddAuditCommand(CLI::App& app) {
  auto options = std::make_shared<AuditOptions>();
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Check a loop without trusting its log: the ledger's journal (hash chain and MACs), every "
      "tried commit still reachable, every keep's protected files unchanged, and every keep scored "
      "again on the audit split by the trusted verifier from a fresh build. Exit status: 0 all "
      "holds, 1 problems found, 2 bad input.");
  cmd->add_option("dir", options->dir, "The loop directory")->required();
  cmd->add_flag("--no-rescore", options->no_rescore,
                "Skip re-scoring the keeps (no build, no run): the ledger and git checks only");
  cmd->add_flag("--json", options->json, "The report as one JSON object");
  cmd->callback([options] { ExitCode() = Audit(*options); });
}

}  // namespace ratchet
