#include "notify/notify_config.h"

#include "notify/webhook_sender.h"

namespace ratchet {

bool ReadNotifyConfig(ConfigSection& section,
                      const std::function<const char*(const char*)>& getenv,
                      NotifyConfig* config, std::string* err) {
  NotifyConfig c;
  if (auto names = section.StringList("events")) {
    for (const std::string& name : *names) {
      NotifyKind kind;
      if (ParseNotifyKind(name, &kind)) c.events.insert(kind);
      else section.Fail("events", "unknown event '" + name + "'; known: " + NotifyKindNames());
    }
  } else {
    c.events = AllNotifyKinds();
  }
  if (auto v = section.Duration("timeout")) c.timeout_s = *v;
  if (auto v = section.Integer("retries")) {
    if (*v < 0 || *v > 10) section.Fail("retries", "must be between 0 and 10");
    else c.retries = static_cast<int>(*v);
  }
  std::vector<ConfigSection> hooks = section.TableArray("webhook");
  if (section.ok() && hooks.empty())
    section.Fail("", "has no [[notify.webhook]]; add one with url_env = \"SLACK_WEBHOOK_URL\"");
  for (ConfigSection& hook : hooks) {
    WebhookConfig w;
    for (const char* secret : {"url", "token"}) {
      if (hook.Has(secret)) {
        hook.Claim(secret);
        hook.Fail(secret, std::string("a webhook's ") + secret +
                              " is a secret and ratchet.toml is committed: put it in an "
                              "environment variable and name that with " + secret + "_env");
      }
    }
    auto env_value = [&](const std::string& key, std::string* name, std::string* value) {
      auto var = hook.String(key);
      if (!var) return false;
      *name = *var;
      const char* v = getenv(var->c_str());
      if (!v || !*v) {
        hook.Fail(key, "the environment variable " + *var + " is not set (export it before "
                           "`ratchet run`; a scheduled loop reads it from its environment)");
        return false;
      }
      *value = v;
      return true;
    };
    if (!hook.Has("url_env") && !hook.Has("url"))
      hook.Fail("", "needs url_env, the environment variable that holds the webhook's URL");
    if (env_value("url_env", &w.url_env, &w.url)) {
      WebhookUrl parsed;
      std::string why;
      if (!ParseWebhookUrl(w.url, &parsed, &why))
        hook.Fail("url_env", "the URL in " + w.url_env + " " + why);
    }
    env_value("token_env", &w.token_env, &w.token);
    if (auto format = hook.String("format")) {
      if (*format == "slack") w.format = WebhookConfig::Format::kSlack;
      else if (*format == "json") w.format = WebhookConfig::Format::kJson;
      else hook.Fail("format", "must be \"slack\" or \"json\"");
    }
    c.webhooks.push_back(std::move(w));
  }
  if (!section.Finish(err)) return false;
  *config = std::move(c);
  return true;
}

}  // namespace ratchet
