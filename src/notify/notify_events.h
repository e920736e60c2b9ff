// Which loop events are worth a message, and the message bodies. Pure: fed
// what the engine tells its Reporter (each finished experiment with the
// incumbent after it, and the stop reason), it says what to send.
//   new_best         a kept experiment (not the baseline) beat the best
//   stop             the loop stopped (target, limits, Ctrl-C, an error)
//   circuit_breaker  the loop stopped after K failed experiments in a row
//   baseline_failed  the unchanged baseline did not produce a metric
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/experiment.h"

namespace ratchet {

enum class NotifyKind { kNewBest, kStop, kCircuitBreaker, kBaselineFailed };

const char* NotifyKindName(NotifyKind kind);
bool ParseNotifyKind(const std::string& name, NotifyKind* kind);
std::set<NotifyKind> AllNotifyKinds();
std::string NotifyKindNames();  // "new_best, stop, ..." for messages

/// Which loop a message is about.
struct LoopIdentity {
  std::string tag;   // [loop] tag
  std::string dir;   // the loop directory
  std::string metric_name;
  bool minimize = true;
};

struct NotifyEvent {
  NotifyKind kind = NotifyKind::kStop;
  std::string text;  // one human line, the Slack message
  /// The experiment it is about (new_best, baseline_failed), or the best so
  /// far (stop, circuit_breaker), when known.
  std::optional<Experiment> experiment;
  std::optional<double> previous_best;  // new_best: the metric it beat
  std::string reason;                   // stop, circuit_breaker, baseline_failed
  double at = 0;                        // unix seconds
};

/// Turns reporter callbacks into events. Remembers the best so far, so a
/// new best can say what it beat.
class NotifyEvents {
 public:
  explicit NotifyEvents(LoopIdentity loop) : loop_(std::move(loop)) {}
  /// The incumbent before this session (a resumed loop), if any.
  void Seed(const Experiment* best);
  std::vector<NotifyEvent> OnFinished(const Experiment& exp, const Experiment* incumbent,
                                      double now);
  std::vector<NotifyEvent> OnStop(const std::string& reason, double now);
  const LoopIdentity& loop() const { return loop_; }

 private:
  std::string Prefix() const;
  std::string BestText() const;

  LoopIdentity loop_;
  std::optional<Experiment> best_;
};

/// {"text": "..."}: what Slack's incoming webhooks (and Mattermost, Discord's
/// /slack endpoint, ...) accept.
std::string SlackBody(const NotifyEvent& event);
/// The event as one JSON object: event, loop, dir, metric, goal, text, at,
/// and experiment / previous_best / reason where they apply.
std::string JsonBody(const NotifyEvent& event, const LoopIdentity& loop);

}  // namespace ratchet
