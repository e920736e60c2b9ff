#include "notify/notify_reporter.h"

namespace ratchet {

void TeeReporter::OnSessionStart(int session_id) {
  for (Reporter* r : reporters_) r->OnSessionStart(session_id);
}
void TeeReporter::OnPhase(const Experiment& exp) {
  for (Reporter* r : reporters_) r->OnPhase(exp);
}
void TeeReporter::OnRunStart(const Experiment& exp, int attempt, const std::string& purpose) {
  for (Reporter* r : reporters_) r->OnRunStart(exp, attempt, purpose);
}
void TeeReporter::OnProgress(const Experiment& exp, std::string_view line) {
  for (Reporter* r : reporters_) r->OnProgress(exp, line);
}
void TeeReporter::OnFinished(const Experiment& exp, const Experiment* incumbent) {
  for (Reporter* r : reporters_) r->OnFinished(exp, incumbent);
}
void TeeReporter::OnNote(const std::string& line) {
  for (Reporter* r : reporters_) r->OnNote(line);
}
void TeeReporter::OnStop(const std::string& reason) {
  for (Reporter* r : reporters_) r->OnStop(reason);
}

namespace {

SenderOptions OptionsOf(const NotifyConfig& c) {
  SenderOptions o;
  o.timeout_s = c.timeout_s;
  o.retries = c.retries;
  return o;
}

}  // namespace

NotifyReporter::NotifyReporter(NotifyConfig config, LoopIdentity loop, Clock* clock,
                               std::function<void(const std::string&)> note)
    : config_(std::move(config)),
      events_(std::move(loop)),
      clock_(clock),
      note_(std::move(note)),
      sender_(OptionsOf(config_)) {}

NotifyReporter::~NotifyReporter() { Close(); }

void NotifyReporter::Send(const std::vector<NotifyEvent>& events) {
  for (const NotifyEvent& e : events) {
    if (!config_.events.count(e.kind)) continue;
    for (const WebhookConfig& w : config_.webhooks) {
      WebhookMessage m;
      m.url = w.url;
      m.bearer_token = w.token;
      m.body = w.format == WebhookConfig::Format::kSlack ? SlackBody(e)
                                                         : JsonBody(e, events_.loop());
      // Names the variable, never the URL: for Slack the URL is the secret.
      m.label = std::string("notify: ") + NotifyKindName(e.kind) + " to $" + w.url_env;
      if (!sender_.Post(std::move(m)))
        note_(std::string("notify: dropped a ") + NotifyKindName(e.kind) +
              " message: too many are waiting for a slow webhook");
    }
  }
}

void NotifyReporter::Drain() {
  for (const std::string& line : sender_.TakeErrors()) note_(line);
}

void NotifyReporter::OnFinished(const Experiment& exp, const Experiment* incumbent) {
  Drain();
  Send(events_.OnFinished(exp, incumbent, clock_->WallSeconds()));
}

void NotifyReporter::OnStop(const std::string& reason) {
  Drain();
  Send(events_.OnStop(reason, clock_->WallSeconds()));
}

void NotifyReporter::Close() {
  if (closed_) return;
  closed_ = true;
  SenderStats stats = sender_.Close();
  Drain();
  if (stats.abandoned > 0)
    note_("notify: gave up on " + std::to_string(stats.abandoned) +
          " message(s) still undelivered after [notify] timeout");
}

}  // namespace ratchet
