#include "outer/sim_loop.h"

#include <cstdio>
#include <set>

#include "core/engine.h"
#include "propose/search/binding.h"
#include "propose/search/search_proposer.h"

namespace ratchet {

namespace {

constexpr const char* kRunCommand = "sim-run";

}  // namespace

SimLoop::SimLoop(const SearchSpace* space, SearchOptions search, const LoopConfig& config,
                 HookSet* hooks, OuterController* outer, EventSink* events)
    : space_(space),
      search_(search),
      config_(config),
      hooks_(hooks),
      outer_(outer),
      events_(events),
      steps_(&clock_) {}

SimLoop::~SimLoop() = default;

bool SimLoop::PointIn(const FileMap& tree, Point* point, std::string* err) const {
  const FileReader read = [&tree](const std::string& rel, std::string* content, std::string* e) {
    auto it = tree.find(rel);
    if (it == tree.end()) {
      *e = rel + ": no such file";
      return false;
    }
    *content = it->second;
    return true;
  };
  Binding binding;
  if (!Binding::Load(*space_, read, &binding, err)) return false;
  *point = binding.current();
  return true;
}

FileMap SimLoop::StartTree(const Point& start) const {
  FileMap tree;
  for (size_t i = 0; i < space_->size(); ++i) {
    const ParamSpec& p = space_->param(i);
    const Syntax syntax = SyntaxForPath(p.file);
    tree[p.file] += p.constant + " = " + ValueToLiteral(*space_, i, start[i], {}, syntax) +
                    (syntax == Syntax::kCpp ? ";\n" : "\n");
  }
  return tree;
}

RunResult SimLoop::RunStep(const RunSpec& spec, const Objective& objective) {
  if (FakeRunner::CommandOf(spec) != kRunCommand) return Exited(0, "");
  Point point;
  std::string err;
  auto copy = repo_->copies.find(spec.cwd);
  if (copy == repo_->copies.end()) return Exited(2, "sim: no working copy at " + spec.cwd + "\n");
  if (!PointIn(copy->second, &point, &err)) return Exited(2, "sim: " + err + "\n");
  const std::optional<double> value = objective(point, runs_++);
  if (!value) return Exited(1, "crashed\n");
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", *value);  // read back exactly
  return Exited(0, "---\n" + config_.metric_name + ": " + text + "\n");
}

bool SimLoop::Run(const Point& start, const Objective& objective, int budget, std::string* err) {
  if (!repo_) {
    repo_ = std::make_unique<FakeRepo>(StartTree(start));
    workspace_ = std::make_unique<FakeWorkspace>(repo_.get());
    ProposerDeps proposer_deps;
    proposer_deps.workspace = workspace_.get();
    proposer_deps.clock = &clock_;
    proposer_ = SearchProposer::ForSpace({search_, *space_}, proposer_deps, err);
    if (!proposer_) return false;
  }
  LoopConfig config = config_;
  config.file = workspace_->root() + "/ratchet.toml";
  std::set<std::string> files;
  for (const ParamSpec& p : space_->params()) files.insert(p.file);
  config.edit_files.assign(files.begin(), files.end());
  config.command = kRunCommand;
  config.budget_s = 10;
  config.timeout_s = 30;
  config.sandbox.required = false;
  config.propose_kind = "search";
  config.max_experiments = budget;
  steps_.handler = [this, &objective](const RunSpec& spec) { return RunStep(spec, objective); };

  EngineDeps deps;
  deps.clock = &clock_;
  deps.steps = &steps_;
  deps.repo = repo_.get();
  deps.workspace = workspace_.get();
  deps.ledger = &ledger_;
  deps.proposer = proposer_.get();
  deps.hooks = hooks_;
  deps.outer = outer_;
  deps.sandbox_why = "a simulation";
  Engine engine(config, deps);
  StopSummary summary;
  const bool ran = engine.Preflight(err) && engine.Run(&summary, err);
  steps_.handler = nullptr;  // `objective` is the caller's, for this call only
  if (!ran) return false;

  const std::string tip = repo_->refs["refs/heads/ratchet/" + config.tag];
  auto tree = repo_->commits.find(tip);
  if (tree == repo_->commits.end()) {
    *err = "sim: no branch ratchet/" + config.tag;
    return false;
  }
  if (!PointIn(tree->second, &incumbent_point_, err)) return false;
  if (events_)
    for (; events_replayed_ < ledger_.events.size(); ++events_replayed_) {
      const LedgerEvent& e = ledger_.events[events_replayed_];
      events_->Record(e.experiment_id, e.kind, e.detail_json);
    }
  return true;
}

}  // namespace ratchet
