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

/// What a judge (trusted/evaluate, trusted/gradcheck) gets: the split to
/// score and the descriptors of its model server.
struct VerifyEnv {
  std::string split = "val";      // RATCHET_VERIFY_SPLIT: val or audit
  std::string run_dir = ".";      // RATCHET_RUN_DIR: where model.bin is
  std::string data_dir = "data";  // GPT_DATA_DIR
  int write_fd = 3;               // RATCHET_SERVE_WRITE_FD: requests to the server
  int read_fd = 4;                // RATCHET_SERVE_READ_FD: its answers
  // RATCHET_PROBE_WRITE_FD / RATCHET_PROBE_READ_FD: a second, independent
  // instance of the same server for the causality probes (-1: none).
  int probe_write_fd = -1;
  int probe_read_fd = -1;
};

/// Reads the variables and checks that the descriptors are open.
bool ReadVerifyEnv(VerifyEnv* env, std::string* err);

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
