#include "cli/terminal_reporter.h"

#include <unistd.h>

#include "cli/format.h"
#include "core/accept.h"
#include "store/live_status.h"

namespace ratchet {

TerminalReporter::TerminalReporter(const LoopConfig& config, const std::string& live_path,
                                   Clock* clock, long long pid, FILE* out)
    : config_(config), live_path_(live_path), clock_(clock), pid_(pid), out_(out),
      tty_(::isatty(::fileno(out)) != 0) {}

void TerminalReporter::WriteLive(const Experiment* exp, const std::string& phase,
                                 const std::string& stop) {
  LiveStatus live;
  live.pid = pid_;
  live.session_id = session_id_;
  live.experiment_id = exp ? exp->id : 0;
  live.phase = phase;
  live.phase_started_at = phase_started_;
  live.run_started_at = run_started_;
  live.budget_s = config_.budget_s;
  live.timeout_s = config_.timeout_s;
  live.progress = progress_;
  live.updated_at = clock_->WallSeconds();
  live.stop_reason = stop;
  std::string err;
  // live.json is a hint for viewers; failing to write it must not stop a loop.
  if (!WriteLiveStatus(live_path_, live, &err)) OnNote("could not write live.json: " + err);
  last_live_write_ = clock_->MonotonicSeconds();
}

void TerminalReporter::ClearProgress() {
  if (progress_shown_ && tty_) std::fprintf(out_, "\r\033[K");
  progress_shown_ = false;
}

void TerminalReporter::OnPhase(const Experiment& exp) {
  if (exp.id != current_id_) {
    current_id_ = exp.id;
    run_started_ = 0;
    progress_.clear();
  }
  phase_ = PhaseName(exp.phase);
  phase_started_ = clock_->WallSeconds();
  WriteLive(&exp, phase_, "");
}

void TerminalReporter::OnRunStart(const Experiment& exp, int attempt, const std::string& purpose) {
  run_started_ = clock_->WallSeconds();
  progress_.clear();
  if (attempt > 1) {
    ClearProgress();
    std::fprintf(out_, "      #%d %s run %d\n", exp.id, purpose.c_str(), attempt);
    std::fflush(out_);
  }
  WriteLive(&exp, "running", "");
}

void TerminalReporter::OnProgress(const Experiment& exp, std::string_view line) {
  progress_ = std::string(line.substr(0, 300));
  double now = clock_->MonotonicSeconds();
  if (now - last_live_write_ >= 0.5) WriteLive(&exp, "running", "");
  if (tty_) {
    std::fprintf(out_, "\r\033[K  #%d %s", exp.id, progress_.substr(0, 150).c_str());
    progress_shown_ = true;
    std::fflush(out_);
  } else if (now - last_progress_print_ >= 10) {
    // A log file gets a progress line every ten seconds, not every step.
    std::fprintf(out_, "  #%d %s\n", exp.id, progress_.c_str());
    std::fflush(out_);
    last_progress_print_ = now;
  }
}

void TerminalReporter::OnFinished(const Experiment& exp, const Experiment* incumbent) {
  ClearProgress();
  std::string line = ExperimentLine(exp, best_ ? &*best_ : nullptr, &config_, config_.metric_name);
  if (exp.status == Status::kKeep && !exp.baseline) line += "  <- new best";
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  if (incumbent) best_ = *incumbent;
  progress_.clear();
  run_started_ = 0;
  WriteLive(&exp, "done", "");
}

void TerminalReporter::OnNote(const std::string& line) {
  ClearProgress();
  std::fprintf(out_, "note: %s\n", line.c_str());
  std::fflush(out_);
}

void TerminalReporter::OnStop(const std::string& reason) {
  ClearProgress();
  WriteLive(nullptr, "stopped", reason);
}

}  // namespace ratchet
