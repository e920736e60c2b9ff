// The built-in search proposer (kind "search"): reads a search space from
// [propose.search] (space_config.h), picks the next point from the loop's
// history with the algorithms of optimizer.h and writes it into the editable
// files (binding.h). The engine commits, runs and decides; this proposer only
// proposes and learns from the results.
//
// What the history teaches (an experiment's point is its params_json; the
// incumbent without params_json, e.g. the baseline, is the point in the files):
//   keep, discard with a metric   -> a result (negated when the goal is max);
//                                    a broken [metric] constraint is a failure
//   pruned                        -> the worst value seen (known to lose)
//   crash, timeout, gate_failed   -> a failure: the region is avoided
//   rejected, out_of_scope, no_change, propose_failed -> tried: never repeated
//   interrupted                   -> ignored (it may be proposed again)
// Parameters a past point lacks take the incumbent's value; names the space no
// longer has are ignored, and points outside the space are skipped.
// Experiments in flight on other workers (request.in_flight, by their
// params_json, read the same way) are pending points: never proposed again,
// and the search spreads away from them (optimizer.h). The baseline in
// flight is the point in the files; another without params_json (still being
// proposed) is not known yet and is skipped.
#pragma once

#include <memory>
#include <string>

#include "core/proposer.h"
#include "core/workspace.h"
#include "propose/search/binding.h"
#include "propose/search/optimizer.h"
#include "propose/search/space_config.h"

namespace ratchet {

class SearchProposer : public Proposer {
 public:
  /// Reads the section and checks every binding in the loop directory
  /// (through deps.workspace, else the folder of config.file); null with a
  /// message naming the file and line otherwise.
  static std::unique_ptr<SearchProposer> Create(ConfigSection& section, const LoopConfig& config,
                                                const ProposerDeps& deps, std::string* err);
  /// A proposer over a space built in code rather than read from a file
  /// (the in-process loop of src/outer/sim_loop.h), its bindings checked
  /// the same way, in deps.workspace.
  static std::unique_ptr<SearchProposer> ForSpace(SearchConfig config, const ProposerDeps& deps,
                                                  std::string* err);

  std::string kind() const override { return "search"; }
  /// Writes the next point into request.worktree (through the Workspace
  /// port, as a Subtree, when the proposer has one). kNoChange when every
  /// admissible point has been tried; kFailed on bad hints or files.
  Proposal Propose(const ProposalRequest& request) override;
  /// Writes `params_json` (a full or partial point; missing names keep the
  /// tree's values) into the tree; it must be in the space and satisfy the
  /// constraints.
  bool Reapply(const ProposalRequest& request, const std::string& params_json,
               std::string* err) override;

  const SearchSpace& space() const { return config_.space; }
  const SearchOptions& options() const { return config_.options; }
  const SearchSpace* search_space() const override { return &config_.space; }
  uint64_t search_seed() const override { return config_.options.seed; }

  /// The observations the history teaches (see the top of this file);
  /// `current` is the point in the files (the incumbent's).
  std::vector<Observation> Observations(const ProposalRequest& request, const Point& current) const;
  /// The points of request.in_flight, in its order (see the top of this file).
  std::vector<Point> Pending(const ProposalRequest& request, const Point& current) const;

 private:
  SearchProposer() = default;
  /// The working copy's files: a Subtree of the loop's Workspace when
  /// `worktree` lies inside it, else the folder itself (tests, benchmarks).
  struct CopyFiles {
    std::unique_ptr<Workspace> copy;
    FileReader read;
    FileWriter write;
  };
  CopyFiles Files(const std::string& worktree) const;
  /// A proposer over `config` whose bindings all load, from deps.workspace
  /// when given, else from the folder `dir`; null with the message otherwise.
  static std::unique_ptr<SearchProposer> Make(SearchConfig config, const ProposerDeps& deps,
                                              const std::string& dir, std::string* err);

  SearchConfig config_;
  Workspace* workspace_ = nullptr;
};

/// The factory for the registry (src/propose/registry.cc).
std::unique_ptr<Proposer> MakeSearchProposer(ConfigSection& section, const LoopConfig& config,
                                             const ProposerDeps& deps, std::string* err);

}  // namespace ratchet
