#include "notify/webhook_sender.h"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace ratchet {

bool ParseWebhookUrl(const std::string& url, WebhookUrl* out, std::string* why) {
  std::string rest;
  std::string scheme;
  for (const char* s : {"http://", "https://"}) {
    if (url.rfind(s, 0) == 0) {
      scheme = s;
      rest = url.substr(scheme.size());
    }
  }
  if (scheme.empty()) {
    *why = "must start with http:// or https://";
    return false;
  }
  size_t slash = rest.find('/');
  std::string host = rest.substr(0, slash);
  if (host.empty() || host.find_first_of(" \t\r\n@") != std::string::npos) {
    *why = "has no usable host (expected scheme://host[:port]/path)";
    return false;
  }
  out->scheme_host_port = scheme + host;
  out->path = slash == std::string::npos ? "/" : rest.substr(slash);
  return true;
}

using Clock = std::chrono::steady_clock;

struct WebhookSender::State {
  SenderOptions options;
  std::mutex mu;
  std::condition_variable cv;  // queue changes, idle, abort
  std::deque<WebhookMessage> queue;
  bool busy = false;      // a message is being sent
  bool closing = false;   // no more Post(); the worker exits when the queue is empty
  bool abort = false;     // give up now
  bool finished = false;  // the worker has returned
  httplib::Client* current = nullptr;  // to shut its socket down on abort
  SenderStats stats;
  std::vector<std::string> errors;
};

namespace {

// One attempt. "" on a 2xx; else what went wrong, and *retry whether another
// attempt could help.
std::string SendOnce(WebhookSender::State& s, const WebhookMessage& m, bool* retry) {
  WebhookUrl url;
  std::string why;
  *retry = false;
  if (!ParseWebhookUrl(m.url, &url, &why)) return "the URL " + why;
  httplib::Client client(url.scheme_host_port);
  auto timeout = std::chrono::duration<double>(s.options.timeout_s);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  client.set_connection_timeout(micros / 1000000, micros % 1000000);
  client.set_read_timeout(micros / 1000000, micros % 1000000);
  client.set_write_timeout(micros / 1000000, micros % 1000000);
  client.set_keep_alive(false);
  if (!m.bearer_token.empty()) client.set_bearer_token_auth(m.bearer_token);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.abort) return "abandoned";
    s.current = &client;
  }
  httplib::Result result = client.Post(url.path, m.body, "application/json");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.current = nullptr;
  }
  if (!result) {
    *retry = true;
    return "no answer (" + httplib::to_string(result.error()) + ")";
  }
  int code = result->status;
  if (code >= 200 && code < 300) return "";
  *retry = code >= 500 || code == 429;
  return "HTTP " + std::to_string(code);
}

void Work(std::shared_ptr<WebhookSender::State> state) {
  WebhookSender::State& s = *state;
  std::unique_lock<std::mutex> lock(s.mu);
  while (true) {
    s.cv.wait(lock, [&] { return s.abort || !s.queue.empty() || s.closing; });
    if (s.abort || s.queue.empty()) break;  // closing with nothing left, or giving up
    WebhookMessage m = std::move(s.queue.front());
    s.queue.pop_front();
    s.busy = true;
    lock.unlock();

    std::string problem;
    int attempts = 0;
    double delay = s.options.retry_delay_s;
    for (int i = 0; i <= s.options.retries; ++i) {
      ++attempts;
      bool retry = false;
      problem = SendOnce(s, m, &retry);
      if (problem.empty() || !retry || i == s.options.retries) break;
      std::unique_lock<std::mutex> wait(s.mu);
      // Wait before the next attempt, but not past an abort.
      if (s.cv.wait_for(wait, std::chrono::duration<double>(delay), [&] { return s.abort; }))
        break;
      delay *= 2;
    }

    lock.lock();
    s.busy = false;
    if (problem.empty()) {
      ++s.stats.delivered;
    } else if (s.abort) {
      ++s.stats.abandoned;
    } else {
      ++s.stats.failed;
      s.errors.push_back(m.label + ": " + problem + " after " + std::to_string(attempts) +
                         (attempts == 1 ? " attempt" : " attempts"));
    }
    s.cv.notify_all();
  }
  s.stats.abandoned += static_cast<int>(s.queue.size());
  s.queue.clear();
  s.finished = true;
  s.cv.notify_all();
}

}  // namespace

WebhookSender::WebhookSender(SenderOptions options) : state_(std::make_shared<State>()) {
  state_->options = options;
  std::thread(Work, state_).detach();  // Close() waits for `finished`, bounded
}

WebhookSender::~WebhookSender() { Close(); }

bool WebhookSender::Post(WebhookMessage message) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->closing || state_->queue.size() >= state_->options.queue_limit) {
    ++state_->stats.dropped;
    return false;
  }
  state_->queue.push_back(std::move(message));
  state_->cv.notify_all();
  return true;
}

SenderStats WebhookSender::Close() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (closed_) return s.stats;
  closed_ = true;
  s.closing = true;
  s.cv.notify_all();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(s.options.timeout_s));
  if (!s.cv.wait_until(lock, deadline, [&] { return s.finished; })) {
    // Out of time: stop the attempt in flight and whatever is queued.
    s.abort = true;
    if (s.current) s.current->stop();
    s.cv.notify_all();
    // stop() shuts the socket down, so the worker returns at once; if it is
    // stuck elsewhere (a DNS lookup), it is left behind, detached, with its
    // own reference to the state.
    s.cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return s.finished; });
  }
  return s.stats;
}

SenderStats WebhookSender::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

std::vector<std::string> WebhookSender::TakeErrors() {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<std::string> out;
  out.swap(state_->errors);
  return out;
}

}  // namespace ratchet
