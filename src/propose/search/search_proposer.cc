#include "propose/search/search_proposer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/workspace.h"
#include "propose/search/binding.h"

namespace ratchet {

namespace {

// The point of a past experiment, leniently: unknown names ignored, missing
// ones from `base`; false when a value is outside the space.
bool PointFromParams(const SearchSpace& space, const std::string& params_json, const Point& base,
                     Point* out) {
  nlohmann::json obj = nlohmann::json::parse(params_json, nullptr, false);
  if (!obj.is_object()) return false;
  Point p = base;
  for (const auto& [name, value] : obj.items()) {
    const int i = space.Find(name);
    if (i < 0) continue;
    std::string err;
    if (!space.ValueFromJson(static_cast<size_t>(i), value, &p[static_cast<size_t>(i)], &err)) {
      return false;
    }
  }
  *out = std::move(p);
  return true;
}

bool MetricConstraintsHold(const LoopConfig& config, const Experiment& e) {
  for (const Constraint& c : config.constraints) {
    auto it = e.metrics.find(c.metric);
    if (it != e.metrics.end() && !c.Holds(it->second)) return false;
  }
  return true;
}

Proposal Failed(const std::string& reason) {
  Proposal p;
  p.outcome = Proposal::Outcome::kFailed;
  p.reason = reason;
  return p;
}

}  // namespace

std::unique_ptr<SearchProposer> SearchProposer::Create(ConfigSection& section,
                                                       const LoopConfig& config,
                                                       const ProposerDeps& deps, std::string* err) {
  SearchConfig search;
  if (!ReadSearchConfig(section, config, &search, err)) return nullptr;
  const std::filesystem::path dir = std::filesystem::path(config.file).parent_path();
  return Make(std::move(search), deps, dir.empty() ? "." : dir.string(), err);
}

std::unique_ptr<SearchProposer> SearchProposer::ForSpace(SearchConfig config,
                                                         const ProposerDeps& deps,
                                                         std::string* err) {
  return Make(std::move(config), deps, ".", err);
}

std::unique_ptr<SearchProposer> SearchProposer::Make(SearchConfig config, const ProposerDeps& deps,
                                                     const std::string& dir, std::string* err) {
  std::unique_ptr<SearchProposer> proposer(new SearchProposer());
  proposer->config_ = std::move(config);
  proposer->workspace_ = deps.workspace;
  // Check the bindings now, so a typo fails before the loop starts.
  FileReader read;
  if (deps.workspace) {
    Workspace* ws = deps.workspace;
    read = [ws](const std::string& rel, std::string* content, std::string* e) {
      return ws->ReadFile(rel, content, e);
    };
  } else {
    read = DirectoryReader(dir);
  }
  Binding binding;
  if (!Binding::Load(proposer->config_.space, read, &binding, err)) {
    *err = "[propose.search]: " + *err;
    return nullptr;
  }
  return proposer;
}

std::vector<Observation> SearchProposer::Observations(const ProposalRequest& request,
                                                      const Point& current) const {
  std::vector<Observation> out;
  if (!request.history) return out;
  const LoopConfig* config = request.config;
  for (const Experiment& e : *request.history) {
    Observation o;
    if (!e.params_json.empty()) {
      if (!PointFromParams(config_.space, e.params_json, current, &o.point)) continue;
    } else if (request.incumbent && e.id == request.incumbent->id) {
      o.point = current;
    } else {
      continue;
    }
    switch (e.status) {
      case Status::kKeep:
      case Status::kDiscard:
        if (!e.metric || (config && !MetricConstraintsHold(*config, e))) {
          o.kind = Observation::Kind::kFailed;
        } else {
          o.kind = Observation::Kind::kValue;
          o.value = (config && config->goal == Goal::kMax) ? -*e.metric : *e.metric;
        }
        break;
      case Status::kPruned:
        // Known to be worse than what it was compared with: valued below
        // (as the worst value seen), not a failure region like a crash.
        o.kind = Observation::Kind::kValue;
        o.value = std::nan("");
        break;
      case Status::kCrash:
      case Status::kTimeout:
      case Status::kGateFailed:
        o.kind = Observation::Kind::kFailed;
        break;
      case Status::kRejected:
      case Status::kOutOfScope:
      case Status::kNoChange:
      case Status::kProposeFailed:
        o.kind = Observation::Kind::kTried;
        break;
      case Status::kInterrupted:
      case Status::kNone:
        continue;
    }
    out.push_back(std::move(o));
  }
  double worst = -std::numeric_limits<double>::infinity();
  for (const Observation& o : out)
    if (o.kind == Observation::Kind::kValue && !std::isnan(o.value)) worst = std::max(worst, o.value);
  for (Observation& o : out) {
    if (o.kind != Observation::Kind::kValue || !std::isnan(o.value)) continue;
    if (std::isfinite(worst)) o.value = worst;
    else o.kind = Observation::Kind::kFailed;  // nothing to value it by yet
  }
  return out;
}

std::vector<Point> SearchProposer::Pending(const ProposalRequest& request,
                                           const Point& current) const {
  std::vector<Point> out;
  if (!request.in_flight) return out;
  for (const Experiment& e : *request.in_flight) {
    Point p;
    if (e.params_json.empty()) {
      // The baseline runs the files as they are, before any keep.
      if (e.baseline) out.push_back(current);
      continue;
    }
    if (PointFromParams(config_.space, e.params_json, current, &p)) out.push_back(std::move(p));
  }
  return out;
}

SearchProposer::CopyFiles SearchProposer::Files(const std::string& worktree) const {
  CopyFiles files;
  const std::string root = workspace_ ? workspace_->root() + "/" : "";
  if (workspace_ && worktree.size() > root.size() && worktree.compare(0, root.size(), root) == 0) {
    files.copy = workspace_->Subtree(worktree.substr(root.size()));
    Workspace* copy = files.copy.get();
    files.read = [copy](const std::string& rel, std::string* content, std::string* e) {
      return copy->ReadFile(rel, content, e);
    };
    files.write = [copy](const std::string& rel, const std::string& content, std::string* e) {
      return copy->WriteFile(rel, content, e);
    };
  } else {
    files.read = DirectoryReader(worktree);
    files.write = DirectoryWriter(worktree);
  }
  return files;
}

Proposal SearchProposer::Propose(const ProposalRequest& request) {
  const SearchSpace& space = config_.space;
  Binding binding;
  std::string err;
  const CopyFiles files = Files(request.worktree);
  if (!Binding::Load(space, files.read, &binding, &err)) {
    return Failed("search: " + err);
  }
  const Point current = binding.current();
  SearchHints hints;
  if (!ParseSearchHints(request.search_hints_json, space, current, &hints, &err)) {
    return Failed(err);
  }
  const std::vector<Observation> history = Observations(request, current);
  const std::vector<Point> pending = Pending(request, current);
  Suggestion s;
  const Optimizer optimizer(&space, config_.options);
  const Error suggested = optimizer.Suggest(history, pending, hints, &current,
                                            static_cast<uint64_t>(request.experiment_id), &s);
  if (!suggested.ok()) {
    // Every point tried is the search's end, not a failure of this experiment.
    Proposal p;
    p.outcome = suggested.Is(Error::Kind::kExhausted) ? Proposal::Outcome::kNoChange
                                                      : Proposal::Outcome::kFailed;
    p.reason = "search: " + suggested.message();
    return p;
  }
  if (!binding.Write(s.point, files.write, nullptr, &err)) {
    return Failed("search: " + err);
  }
  std::vector<bool> changed(space.size());
  for (size_t i = 0; i < space.size(); ++i) changed[i] = s.point[i] != current[i];
  Proposal p;
  p.outcome = Proposal::Outcome::kCandidate;
  p.description = space.Describe(s.point, &changed);
  if (p.description.empty()) p.description = space.Describe(s.point);
  p.hypothesis = "search " + std::string(AlgorithmName(config_.options.algorithm)) + ": " +
                 s.method + " (from " + std::to_string(history.size()) + " tried points" +
                 (pending.empty() ? "" : ", " + std::to_string(pending.size()) + " in flight") +
                 ")";
  p.params_json = space.ToJson(s.point);
  return p;
}

bool SearchProposer::Reapply(const ProposalRequest& request, const std::string& params_json,
                             std::string* err) {
  const SearchSpace& space = config_.space;
  Binding binding;
  const CopyFiles files = Files(request.worktree);
  if (!Binding::Load(space, files.read, &binding, err)) return false;
  Point point;
  if (!space.FromJson(params_json, binding.current(), &point, err)) return false;
  const std::string violated = space.Violated(point);
  if (!violated.empty()) {
    *err = "rewritten point " + space.Describe(point) + " breaks the constraint " + violated;
    return false;
  }
  return binding.Write(point, files.write, nullptr, err);
}

std::unique_ptr<Proposer> MakeSearchProposer(ConfigSection& section, const LoopConfig& config,
                                             const ProposerDeps& deps, std::string* err) {
  return SearchProposer::Create(section, config, deps, err);
}

}  // namespace ratchet
