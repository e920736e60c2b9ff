// [notify]: which loop events go to which webhooks.
//   [notify]
//   events = ["new_best", "stop", "circuit_breaker", "baseline_failed"]  # default: all
//   timeout = "5s"      # one delivery attempt; also the most `ratchet run` waits at exit
//   retries = 2         # more attempts after a failure (connection error, 5xx, 429)
//   [[notify.webhook]]
//   url_env = "SLACK_WEBHOOK_URL"  # the environment variable holding the URL
//   format = "slack"               # {"text": "..."}; or "json": the event as an object
//   token_env = "HOOK_TOKEN"       # optional: sent as "Authorization: Bearer <token>"
// Secrets never live in ratchet.toml (it is committed): the URL (for Slack,
// the URL is the secret) and the token come from the environment only, and
// a `url` or `token` key is refused with a message saying so.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/config_section.h"
#include "notify/notify_events.h"

namespace ratchet {

struct WebhookConfig {
  enum class Format { kSlack, kJson };
  std::string url_env;
  std::string url;  // read from url_env
  Format format = Format::kSlack;
  std::string token_env;
  std::string token;  // read from token_env; "" for none
};

struct NotifyConfig {
  std::set<NotifyKind> events;  // filled with every kind when the key is absent
  double timeout_s = 5;
  int retries = 2;
  std::vector<WebhookConfig> webhooks;
};

/// Reads [notify] strictly (unknown keys are errors, with FILE:LINE:COL).
/// `getenv` looks variables up (std::getenv in ratchet run). An unset or
/// empty variable, or a URL that is not http(s)://host[:port][/path], is an
/// error naming the variable but never printing its value.
bool ReadNotifyConfig(ConfigSection& section,
                      const std::function<const char*(const char*)>& getenv,
                      NotifyConfig* config, std::string* err);

}  // namespace ratchet
