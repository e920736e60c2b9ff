// Delivers webhook POSTs on a background thread, so a slow, failing or
// hanging endpoint never holds the loop up. Post() only queues (a bounded
// queue: when it is full the new message is dropped and counted); the
// worker sends each message with up to `retries` more attempts after a
// connection error, a 5xx or a 429, each attempt bounded by `timeout_s`.
// Close() (and the destructor) waits at most `timeout_s` for what is still
// queued, then abandons it: the socket in use is shut down, and a worker
// that still does not return is detached rather than waited for.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ratchet {

struct WebhookUrl {
  std::string scheme_host_port;  // "https://hooks.slack.com" or "http://127.0.0.1:8080"
  std::string path;              // "/services/T000/B000/XXX", "/" when empty
};
/// Accepts http:// and https:// URLs with a host. *why says what is wrong,
/// without repeating the URL (it may hold a secret).
bool ParseWebhookUrl(const std::string& url, WebhookUrl* out, std::string* why);

struct WebhookMessage {
  std::string url;           // already checked by ParseWebhookUrl
  std::string bearer_token;  // "" for none
  std::string body;          // JSON
  std::string label;         // names the message in error lines, e.g. "new_best to $SLACK_WEBHOOK_URL"
};

struct SenderOptions {
  double timeout_s = 5;
  int retries = 2;
  double retry_delay_s = 0.5;  // doubled after each failed attempt
  size_t queue_limit = 64;
};

struct SenderStats {
  int delivered = 0;
  int failed = 0;     // every attempt failed
  int dropped = 0;    // the queue was full
  int abandoned = 0;  // still queued or in flight when Close() gave up
};

class WebhookSender {
 public:
  explicit WebhookSender(SenderOptions options);
  ~WebhookSender();  // Close()
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  /// Queues a message; never blocks on the network. False when the queue is
  /// full (or the sender is closed): the message is dropped.
  bool Post(WebhookMessage message);
  /// Waits until the queue is empty, at most timeout_s, then gives up on the
  /// rest. Returns the final counts. Idempotent.
  SenderStats Close();
  SenderStats stats() const;
  /// Failure lines since the last call ("new_best to $X: HTTP 500 after 3
  /// attempts"), for the caller to print on its own thread.
  std::vector<std::string> TakeErrors();

  struct State;  // shared with the worker, which may outlive a detached Close

 private:
  std::shared_ptr<State> state_;
  bool closed_ = false;
};

}  // namespace ratchet
