// The outer loop (the engine's OuterController): after every experiment it
// retires mechanisms that failed; every `every` experiments it runs level 1.5
// (the tuner adjusts the search); every `mechanism_every` experiments level 2
// judges each mechanism by the experiments it acted on, switches built-ins
// off or on again, retires external ones that do not help, and, when the
// loop is stuck and a coding agent is configured, has it write a new
// mechanism, which is checked before it is switched on. Everything it decides
// is a ledger event with its reason ("outer" for level 1.5, "mechanism" for
// level 2), shown by `ratchet log`; mechanisms' files and effects are kept
// under .ratchet/mechanisms/. It never touches a running experiment: it acts
// only between experiments, through the HookSet.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/hooks.h"
#include "core/runner.h"
#include "core/workspace.h"
#include "outer/external_mechanism.h"
#include "outer/mechanism_store.h"
#include "outer/outer_config.h"
#include "outer/tuner.h"

namespace ratchet {

struct OuterDeps {
  ProcessRunner* runner = nullptr;     // for the author agent; may be null
  Workspace* workspace = nullptr;      // .ratchet/mechanisms; null: nothing kept
  const SearchSpace* space = nullptr;  // null: the proposer is not the search
  uint64_t seed = 0;
  /// Whether untrusted steps run in the sandbox (the engine's plan): then
  /// the author agent and every external mechanism do too.
  bool sandbox = false;
  std::string user_home;  // hidden from them, like the loop directory
};

class OuterLoop : public OuterController {
 public:
  enum class State { kOn, kOff, kRetired };
  struct Managed {
    std::shared_ptr<OuterMechanism> mechanism;  // null once retired (external)
    std::string name;
    std::string origin;  // "builtin", "config", "agent"
    State state = State::kOff;
    int since = 0;            // experiments finished when it was last switched on
    long long calls_at_on = 0;
    int trials = 0;           // times switched on
    std::string reason;       // of the last change
    ExternalSpec spec;        // external ones
  };

  OuterLoop(const OuterConfig& outer, const LoopConfig& config, const OuterDeps& deps);
  ~OuterLoop() override;

  /// Adds the tuner and the mechanisms on at the start to `hooks`; checks
  /// the external mechanisms (configured ones, and those an agent wrote in
  /// earlier sessions that were still on) on `history`, or on a made-up
  /// trace when it is short. What it decides is recorded with the first
  /// experiment of the session. False only when the loop directory cannot
  /// be written.
  bool Install(HookSet* hooks, const std::vector<Experiment>& history, std::string* err);

  void AfterExperiment(const LoopView& view, HookSet* hooks, EventSink* events) override;

  const std::vector<Managed>& managed() const { return managed_; }
  TunerMechanism* tuner() { return tuner_.get(); }

  /// What a mechanism achieved while on: calls, experiments it acted on,
  /// keeps and gain among them, and the same for the other experiments.
  nlohmann::json Effect(const Managed& m, const std::vector<Experiment>& history) const;

 private:
  struct Pending {
    std::string kind;
    nlohmann::json detail;
  };
  void Level15(const LoopView& view, EventSink* events);
  void Level2(const LoopView& view, HookSet* hooks, EventSink* events);
  void Author(const LoopView& view, HookSet* hooks, EventSink* events);
  /// Checks an external mechanism and, when it passes, switches it on.
  void CheckAndStart(Managed* m, const std::vector<Experiment>& history, HookSet* hooks,
                     int experiments);
  void SwitchOn(Managed* m, HookSet* hooks, int experiments, const std::string& reason);
  void SwitchOff(Managed* m, HookSet* hooks, State to, const std::string& reason);
  void Record(const std::string& kind, nlohmann::json detail);
  void Flush(int experiment_id, EventSink* events);
  void Save(const Managed& m, const std::vector<Experiment>* history);
  std::shared_ptr<OuterMechanism> MakeBuiltin(const std::string& name, std::string* err) const;
  /// The view of an external mechanism that runs in `cwd` (FolderSandbox:
  /// that folder read-only), or none when the loop runs without the sandbox.
  SandboxSpec MechanismSandbox(const std::string& cwd) const;

  OuterConfig outer_;
  LoopConfig config_;
  OuterDeps deps_;
  BuiltinContext context_;
  MechanismStore store_;
  std::shared_ptr<TunerMechanism> tuner_;
  std::vector<Managed> managed_;
  std::vector<Pending> pending_;
  int authored_ = 0;
};

const char* OuterStateName(OuterLoop::State state);

/// Reads [outer], makes the outer loop and installs it in `hooks`. Null with
/// *err on a bad section.
std::unique_ptr<OuterLoop> MakeOuterLoop(ConfigSection& section, const LoopConfig& config,
                                         const OuterDeps& deps, HookSet* hooks,
                                         const std::vector<Experiment>& history,
                                         std::string* err);

}  // namespace ratchet
