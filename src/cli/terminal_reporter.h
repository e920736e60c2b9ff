// Shows a running loop in the terminal and keeps .ratchet/live.json current
// for `ratchet status` and the dashboard.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/config.h"
#include "core/reporter.h"

namespace ratchet {

class TerminalReporter : public Reporter {
 public:
  /// `out` is the terminal; progress lines rewrite one line when it is a TTY.
  TerminalReporter(const LoopConfig& config, const std::string& live_path, Clock* clock,
                   long long pid, FILE* out);

  void OnSessionStart(int session_id) override { session_id_ = session_id; }
  void OnPhase(const Experiment& exp) override;
  void OnRunStart(const Experiment& exp, int attempt, const std::string& purpose) override;
  void OnProgress(const Experiment& exp, std::string_view line) override;
  void OnFinished(const Experiment& exp, const Experiment* incumbent) override;
  void OnNote(const std::string& line) override;
  void OnStop(const std::string& reason) override;

 private:
  void WriteLive(const Experiment* exp, const std::string& phase, const std::string& stop);
  void ClearProgress();

  const LoopConfig& config_;
  std::string live_path_;
  Clock* clock_;
  long long pid_;
  FILE* out_;
  bool tty_;
  bool progress_shown_ = false;
  int session_id_ = 0;
  int current_id_ = 0;
  std::string phase_;
  double phase_started_ = 0;
  double run_started_ = 0;
  std::string progress_;
  double last_live_write_ = 0;
  double last_progress_print_ = 0;
  std::optional<Experiment> best_;  // the incumbent before the current experiment
};

}  // namespace ratchet
