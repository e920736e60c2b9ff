// Reporters around the engine: TeeReporter passes every callback to several
// reporters (the terminal, then notifications), and NotifyReporter turns
// the callbacks into webhook messages ([notify], notify_config.h). Neither
// blocks the loop: messages are queued on a WebhookSender.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/reporter.h"
#include "notify/notify_config.h"
#include "notify/notify_events.h"
#include "notify/webhook_sender.h"

namespace ratchet {

class TeeReporter : public Reporter {
 public:
  explicit TeeReporter(std::vector<Reporter*> reporters) : reporters_(std::move(reporters)) {}
  void OnSessionStart(int session_id) override;
  void OnPhase(const Experiment& exp) override;
  void OnRunStart(const Experiment& exp, int attempt, const std::string& purpose) override;
  void OnProgress(const Experiment& exp, std::string_view line) override;
  void OnFinished(const Experiment& exp, const Experiment* incumbent) override;
  void OnNote(const std::string& line) override;
  void OnStop(const std::string& reason) override;

 private:
  std::vector<Reporter*> reporters_;
};

class NotifyReporter : public Reporter {
 public:
  /// `note` prints a line for the user (delivery failures), always called on
  /// the engine's thread.
  NotifyReporter(NotifyConfig config, LoopIdentity loop, Clock* clock,
                 std::function<void(const std::string&)> note);
  ~NotifyReporter() override;

  /// The best result before this session, so the first new best says what it beat.
  void Seed(const Experiment* best) { events_.Seed(best); }
  void OnFinished(const Experiment& exp, const Experiment* incumbent) override;
  void OnStop(const std::string& reason) override;
  /// Waits at most [notify] timeout for queued messages, then reports what
  /// could not be delivered. Called before `ratchet run` exits.
  void Close();

 private:
  void Send(const std::vector<NotifyEvent>& events);
  void Drain();  // prints delivery failures so far

  NotifyConfig config_;
  NotifyEvents events_;
  Clock* clock_;
  std::function<void(const std::string&)> note_;
  WebhookSender sender_;
  bool closed_ = false;
};

}  // namespace ratchet
