// `ratchet finalize DIR [--branch NAME]`: the loop's kept history as a short
// series of clean commits on a new branch (default ratchet/<tag>-final),
// ready for review as a pull request. One commit per independent
// improvement: consecutive keeps that touch the same lines (or lines within
// 3 of each other) of a file are one commit, any other keep starts the next
// (vcs/finalize.h). Each message gives the measured effect (metric before ->
// after) and the experiments behind it. The series starts where the loop
// began and ends on exactly the tree of the loop's best commit; nothing on
// the loop branch changes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/loop_dir.h"
#include "core/accept.h"
#include "store/sqlite_ledger.h"
#include "vcs/finalize.h"

namespace ratchet {
namespace {

// Hunks closer than this are one region (git's default context is 3 lines).
constexpr int kNearLines = 3;

struct FinalizeOptions {
  std::string dir;
  std::string branch;
};

std::string MetricOf(const Experiment& e) { return e.metric ? FormatMetric(*e.metric) : "-"; }

std::string Subject(const std::vector<const Experiment*>& keeps) {
  std::string s = keeps.front()->description.empty() ? "an improvement found by ratchet"
                                                      : keeps.front()->description;
  if (keeps.size() > 1)
    s += " (and " + std::to_string(keeps.size() - 1) + " more step" +
         (keeps.size() > 2 ? "s" : "") + " on the same lines)";
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

std::string Message(const std::vector<const Experiment*>& keeps, const Experiment& before,
                    const std::vector<Experiment>& history, const LoopConfig& config) {
  const Experiment& after = *keeps.back();
  const std::string name = config.metric_name;
  std::string m = Subject(keeps) + "\n\n";
  m += "Measured effect: " + name + " " + MetricOf(before) + " -> " + MetricOf(after) + " (" +
       (config.goal == Goal::kMin ? "lower" : "higher") + " is better), by the ratchet loop " +
       config.tag + " (branch ratchet/" + config.tag + ").\n\nExperiments:\n";
  std::set<std::string> parents;
  std::string ids;
  std::set<std::string> files;
  for (const Experiment* k : keeps) {
    m += "- #" + std::to_string(k->id) + " keep, " + name + " " + MetricOf(*k) + ": " +
         k->description + " (loop commit " + Short(k->candidate_commit) + ")\n";
    parents.insert(k->parent_commit);
    ids += (ids.empty() ? "" : ", ") + std::to_string(k->id);
    for (const std::string& f : k->files_changed) files.insert(f);
  }
  // What was tried from the same states and not kept: the evidence around it.
  std::string tried;
  int n = 0;
  for (const Experiment& e : history) {
    if (e.baseline || e.status == Status::kKeep || !parents.count(e.parent_commit)) continue;
    if (++n <= 8)
      tried += (tried.empty() ? "" : ", ") + std::string("#") + std::to_string(e.id) + " " +
               StatusName(e.status);
  }
  if (n > 8) tried += ", and " + std::to_string(n - 8) + " more";
  if (!tried.empty()) m += "Tried from the same states and not kept: " + tried + ".\n";
  if (!files.empty()) {
    m += "Files:";
    for (const std::string& f : files) m += " " + f;
    m += "\n";
  }
  m += "\nRatchet-Experiments: " + ids + "\n";
  return m;
}

int Finalize(const FinalizeOptions& o) {
  LoopPaths paths;
  std::string err;
  if (!ResolveLoop(o.dir, &paths, &err)) return Fail(err);
  LoopConfig config;
  if (!LoadLoopConfig(paths, &config, &err)) return Fail(err);
  std::unique_ptr<SqliteLedger> ledger;
  if (!OpenLedgerReadOnly(paths, &ledger).Report(&err)) return Fail(err);
  std::vector<Experiment> history;
  std::string start;
  if (!ledger->LoadExperiments(&history, &err) || !ledger->GetMeta("start_commit", &start, &err))
    return Fail(err);

  const Experiment* baseline = nullptr;
  std::vector<const Experiment*> keeps;
  for (const Experiment& e : history) {
    if (e.status != Status::kKeep) continue;
    if (e.baseline) baseline = &e;
    else keeps.push_back(&e);
  }
  if (keeps.empty()) return Fail("no experiment was kept beyond the baseline: nothing to finalize");
  // The kept commits form one chain from where the loop began.
  std::vector<std::string> chain = {start};
  for (const Experiment* k : keeps) {
    if (k->parent_commit != chain.back())
      return Fail("the ledger's keeps do not form one chain (#" + std::to_string(k->id) +
                  " was proposed from " + Short(k->parent_commit) + ", not " +
                  Short(chain.back()) + ")");
    chain.push_back(k->candidate_commit);
  }

  std::unique_ptr<Finalizer> finalizer;
  if (!Finalizer::Open(paths.dir, &finalizer, &err)) return Fail(err);
  std::vector<std::vector<int>> groups;
  if (!finalizer->Group(chain, kNearLines, &groups, &err)) return Fail(err);
  std::vector<SeriesCommit> series;
  const Experiment* before = baseline;
  Experiment none;
  for (const std::vector<int>& g : groups) {
    std::vector<const Experiment*> members;
    for (int i : g) members.push_back(keeps[i - 1]);
    series.push_back({members.back()->candidate_commit,
                      Message(members, before ? *before : none, history, config)});
    before = members.back();
  }
  const std::string branch = o.branch.empty() ? "ratchet/" + config.tag + "-final" : o.branch;
  std::vector<std::string> shas;
  if (!finalizer->Write(start, branch, series, &shas, &err)) return Fail(err);

  std::printf("wrote branch %s: %zu commit%s from %zu kept experiments, on %s (where the loop "
              "began)\n",
              branch.c_str(), shas.size(), shas.size() == 1 ? "" : "s", keeps.size(),
              Short(start).c_str());
  for (size_t i = 0; i < shas.size(); ++i) {
    const std::string& msg = series[i].message;
    std::printf("  %s %s\n", Short(shas[i]).c_str(), msg.substr(0, msg.find('\n')).c_str());
  }
  const Experiment& best = *keeps.back();
  std::printf("its tree is the best result's: #%d %s=%s (loop commit %s)\n", best.id,
              config.metric_name.c_str(), MetricOf(best).c_str(),
              Short(best.candidate_commit).c_str());
  std::printf("review: git log --stat %s..%s\n", Short(start).c_str(), branch.c_str());
  return 0;
}

}  // namespace

void AddFinalizeCommand(CLI::App& app) {
  auto o = std::make_shared<FinalizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "finalize",
      "Turn the kept history of the loop in DIR into a short series of clean commits on a new "
      "branch, one per independent improvement, each with its measured effect and the "
      "experiments behind it, ready for review. The loop branch does not change.");
  cmd->add_option("dir", o->dir, "The loop directory")->required();
  cmd->add_option("--branch", o->branch, "The new branch (default ratchet/<tag>-final)");
  cmd->callback([o] { ExitCode() = Finalize(*o); });
}

}  // namespace ratchet
