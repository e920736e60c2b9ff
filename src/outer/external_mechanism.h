// A mechanism in another program: an executable that speaks the JSON-lines
// protocol of protocol.h over its stdin and stdout, at the hooks it declares
// in its hello answer. Before its first hook call it is sent every finished
// experiment (on_result with "replay": true, when it takes on_result), so a
// mechanism started on a resumed loop knows the trace.
//
// A mechanism that crashes, hangs (no answer within the time limit) or
// answers garbage is stopped at once and fails: failure() says what happened
// and at which hook; from then on it answers nothing and the loop goes on
// without it (the outer loop records the failure and retires it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "exec/line_process.h"
#include "outer/mechanism.h"
#include "propose/search/space.h"

namespace ratchet {

struct ExternalSpec {
  std::string name;
  std::vector<std::string> command;
  std::string cwd;          // "" = ratchet's
  std::string stderr_path;  // "" = discarded
  double timeout_s = 5;     // for each answer
  /// Where it runs (OuterLoop fills it: its folder read-only, nothing else
  /// of the loop, no network), unless the loop runs without the sandbox.
  SandboxSpec sandbox;
};

class ExternalMechanism : public OuterMechanism {
 public:
  /// Starts the program and reads its hello answer. Null with *err when it
  /// cannot start or its hello is late or garbage (*kind: "crash", "hang",
  /// "garbage"). `space` may be null (not the search proposer).
  static std::unique_ptr<ExternalMechanism> Start(const ExternalSpec& spec,
                                                  const LoopConfig& config,
                                                  const SearchSpace* space, std::string* kind,
                                                  std::string* err);
  ~ExternalMechanism() override;

  std::string name() const override { return spec_.name; }
  std::vector<Hook> hooks() const override { return hooks_; }
  /// "crash", "hang" or "garbage" once failed, else "".
  std::string failure_kind() const override { return failure_kind_; }
  /// Answers exchanged, replays included.
  long long exchanges() const { return exchanges_; }
  /// Stops the program (a retired mechanism).
  void Stop() override;

 protected:
  bool DoBeforePropose(const LoopView& view, Guidance* guidance) override;
  bool DoOnCandidate(const LoopView& view, const CandidateView& candidate,
                     CandidateVerdict* verdict) override;
  void DoOnResult(const LoopView& view, const Experiment& result) override;
  bool DoAccept(const LoopView& view, const Experiment& candidate, const Experiment& incumbent,
                AcceptVerdict* verdict) override;

 private:
  ExternalMechanism(const ExternalSpec& spec, const SearchSpace* space)
      : spec_(spec), space_(space) {}
  bool Takes(Hook hook) const;
  /// One request and its answer line; false (and failed) on a crash or hang.
  bool Ask(const nlohmann::json& request, const char* hook, std::string* answer);
  void Garbage(const char* hook, const std::string& what);
  /// Sends the finished experiments it has not seen yet.
  bool CatchUp(const LoopView& view, int upto_id);
  Point Anchor(const LoopView& view) const;

  ExternalSpec spec_;
  const SearchSpace* space_;
  LineProcess process_;
  std::vector<Hook> hooks_;
  std::string failure_kind_;
  int seen_ = 0;  // experiments sent so far (ids 1..seen_)
  long long exchanges_ = 0;
};

}  // namespace ratchet
