// The workload protocol's inputs, read from the environment ratchet sets
// (see ratchet's ARCHITECTURE.md, "Workload protocol"), with the defaults a
// run by hand gets.
#pragma once

#include <cstdint>
#include <string>

namespace gpt {

struct RunEnv {
  double budget_seconds = 60;     // RATCHET_BUDGET_SECONDS: training time, start-up excluded
  uint64_t seed = 0;              // RATCHET_SEED
  std::string experiment;         // RATCHET_EXPERIMENT (informational)
  std::string run_dir = ".";      // RATCHET_RUN_DIR: where the model is saved
  std::string data_dir = "data";  // GPT_DATA_DIR: the prepared, verified splits
  bool cpu_clock = false;         // GPT_CLOCK=cpu: see TrainingClock
};

/// Reads the variables; false with a message for a malformed value.
bool ReadRunEnv(RunEnv* env, std::string* err);

/// Measures training time against the budget. By default wall-clock time.
/// With GPT_CLOCK=cpu it is the process's CPU time divided by its number of
/// busy threads: on a machine shared with other work this moves much less
/// than wall-clock time, so experiments stay comparable (a tuning aid; speed
/// is reported in wall-clock time).
class TrainingClock {
 public:
  TrainingClock(bool cpu_clock, int threads);
  /// Seconds since construction.
  double Seconds() const;

 private:
  double Now() const;
  bool cpu_;
  int threads_;
  double start_;
};

}  // namespace gpt
