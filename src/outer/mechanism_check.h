// The check a new external mechanism passes before it touches a live loop:
// started on its own, it must answer its hello, then every hook it declares
// on a recorded trace (the loop's own experiments, or a small made-up trace
// when the loop has too few), each answer within the time limit and valid,
// and every declared hook must have been called at least once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "outer/external_mechanism.h"

namespace ratchet {

struct CheckReport {
  bool ok = false;
  std::string reason;   // why it failed, or what it passed
  std::string kind;     // on failure: "crash", "hang", "garbage", "never_called", "start"
  std::map<std::string, long long> calls;  // by hook
  int experiments = 0;  // of the trace replayed
  bool synthetic = false;
  double seconds = 0;
};

/// Runs the check on `trace` (at most `max_experiments` of it; a trace of
/// fewer than 3 experiments is replaced by a made-up one).
CheckReport CheckMechanism(const ExternalSpec& spec, const LoopConfig& config,
                           const SearchSpace* space, const std::vector<Experiment>& trace,
                           int max_experiments = 20);

/// A small trace with a keep, a discard, a crash and parameters when there is
/// a search space, for checking a mechanism before the loop has its own.
std::vector<Experiment> SyntheticTrace(const LoopConfig& config, const SearchSpace* space);

std::string CheckReportJson(const CheckReport& report);

}  // namespace ratchet
