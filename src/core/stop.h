// The stop rules of [stop], checked before each experiment. Pure.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/experiment.h"

namespace ratchet {

struct StopInput {
  const std::vector<Experiment>* history = nullptr;  // finished experiments
  const Experiment* incumbent = nullptr;             // null before a baseline is kept
  double elapsed_wall_s = 0;  // loop wall-clock so far, all sessions together
  int interrupts = 0;         // Ctrl-C presses
  int in_flight = 0;          // experiments started and not finished (they count too)
};

/// "" to go on; otherwise why the loop stops, as one line.
std::string CheckStop(const StopInput& input, const LoopConfig& config);

/// Experiments since the last keep (the baseline excluded).
int ExperimentsSinceBest(const std::vector<Experiment>& history);
/// Trailing run of failure statuses (interrupted ones are skipped).
int ConsecutiveFailures(const std::vector<Experiment>& history);
Usage TotalUsage(const std::vector<Experiment>& history);

}  // namespace ratchet
