#include "exec/local_runner.h"

#include "exec/sandbox_probe.h"
#include "exec/step_runner.h"

namespace ratchet {

LocalProcessRunner::LocalProcessRunner(LocalRunnerOptions options) : options_(std::move(options)) {}

bool LocalProcessRunner::SandboxAvailable(std::string* why) {
  const SandboxProbe& probe = ProbeSandbox(options_.bwrap);
  if (why) *why = probe.why;
  return probe.works;
}

RunResult LocalProcessRunner::Run(const RunSpec& spec) {
  // How often the cancel flag is looked at, at most.
  constexpr double kCancelPoll = 0.05;
  LocalStepRunner runner(options_);
  StepRunner::StepId id = runner.Start(spec);
  RunResult result;
  StepRunner::StepId done;
  while (!runner.Wait(spec.cancel ? kCancelPoll : 3600, &done, &result)) {
    if (spec.cancel && spec.cancel->load()) runner.Cancel(id);
  }
  return result;
}

}  // namespace ratchet
