#include "notify/notify_config.h"

#include <gtest/gtest.h>

#include <map>

namespace ratchet {
namespace {

class NotifyConfigTest : public ::testing::Test {
 protected:
  bool Read(const std::string& toml, NotifyConfig* config, std::string* err) {
    ConfigSection root;
    if (!ConfigSection::Parse(toml, "ratchet.toml", &root, err)) return false;
    ConfigSection section = root.Table("notify");
    return ReadNotifyConfig(section, getenv, config, err);
  }
  std::map<std::string, std::string> env = {{"SLACK_URL", "https://hooks.example.com/T0/B0/xyz"},
                                            {"LOCAL_URL", "http://127.0.0.1:9/hook"},
                                            {"TOKEN", "s3cret"}};
  std::function<const char*(const char*)> getenv = [this](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
};

TEST_F(NotifyConfigTest, ReadsWebhooksFromTheEnvironment) {
  NotifyConfig c;
  std::string err;
  ASSERT_TRUE(Read(R"(
[notify]
events = ["new_best", "stop"]
timeout = "2s"
retries = 1
[[notify.webhook]]
url_env = "SLACK_URL"
[[notify.webhook]]
url_env = "LOCAL_URL"
format = "json"
token_env = "TOKEN"
)",
                   &c, &err))
      << err;
  EXPECT_EQ(c.events, (std::set<NotifyKind>{NotifyKind::kNewBest, NotifyKind::kStop}));
  EXPECT_EQ(c.timeout_s, 2);
  EXPECT_EQ(c.retries, 1);
  ASSERT_EQ(c.webhooks.size(), 2u);
  EXPECT_EQ(c.webhooks[0].url, "https://hooks.example.com/T0/B0/xyz");
  EXPECT_EQ(c.webhooks[0].format, WebhookConfig::Format::kSlack);
  EXPECT_EQ(c.webhooks[0].token, "");
  EXPECT_EQ(c.webhooks[1].format, WebhookConfig::Format::kJson);
  EXPECT_EQ(c.webhooks[1].token, "s3cret");
}

TEST_F(NotifyConfigTest, DefaultsToEveryEvent) {
  NotifyConfig c;
  std::string err;
  ASSERT_TRUE(Read("[notify]\n[[notify.webhook]]\nurl_env = \"SLACK_URL\"\n", &c, &err)) << err;
  EXPECT_EQ(c.events, AllNotifyKinds());
  EXPECT_EQ(c.timeout_s, 5);
  EXPECT_EQ(c.retries, 2);
}

TEST_F(NotifyConfigTest, SecretsNeverComeFromTheFile) {
  NotifyConfig c;
  std::string err;
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nurl = \"https://hooks.example.com/x\"\n", &c,
                    &err));
  EXPECT_NE(err.find("ratchet.toml:3:7: [notify.webhook[1]] url: a webhook's url is a secret"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("url_env"), std::string::npos) << err;
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nurl_env = \"SLACK_URL\"\ntoken = \"abc\"\n", &c,
                    &err));
  EXPECT_NE(err.find("token is a secret"), std::string::npos) << err;
}

TEST_F(NotifyConfigTest, ClearErrors) {
  NotifyConfig c;
  std::string err;
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nurl_env = \"NOPE\"\n", &c, &err));
  EXPECT_NE(err.find("the environment variable NOPE is not set"), std::string::npos) << err;
  env["BAD"] = "ftp://secret-host/x";
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nurl_env = \"BAD\"\n", &c, &err));
  EXPECT_NE(err.find("the URL in BAD must start with http:// or https://"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("secret-host"), std::string::npos) << "never print the URL: " << err;
  EXPECT_FALSE(Read("[notify]\nevents = [\"best\"]\n[[notify.webhook]]\nurl_env = \"SLACK_URL\"\n",
                    &c, &err));
  EXPECT_NE(err.find("unknown event 'best'; known: new_best, stop"), std::string::npos) << err;
  EXPECT_FALSE(Read("[notify]\ntimeout = \"1s\"\n", &c, &err));
  EXPECT_NE(err.find("has no [[notify.webhook]]"), std::string::npos) << err;
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nurl_env = \"SLACK_URL\"\nformt = \"json\"\n",
                    &c, &err));
  EXPECT_NE(err.find("unknown key 'formt'"), std::string::npos) << err;
  EXPECT_FALSE(Read("[notify]\n[[notify.webhook]]\nformat = \"json\"\n", &c, &err));
  EXPECT_NE(err.find("needs url_env"), std::string::npos) << err;
}

}  // namespace
}  // namespace ratchet
