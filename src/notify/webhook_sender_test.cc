#include "notify/webhook_sender.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace ratchet {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A real HTTP server on a free loopback port that records what it gets and
// answers with `status`.
class Recorder {
 public:
  explicit Recorder(int status) : status_(status) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(req.body);
      auth_.push_back(req.get_header_value("Authorization"));
      types_.push_back(req.get_header_value("Content-Type"));
      res.status = status_;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Recorder() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }
  std::vector<std::string> types() {
    std::lock_guard<std::mutex> lock(mu_);
    return types_;
  }

 private:
  int status_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> bodies_, auth_, types_;
};

// A server that hangs: it listens but never accepts, so a client connects
// (the kernel completes the handshake), sends its request and waits forever.
class Hanging {
 public:
  Hanging() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Hanging() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

WebhookMessage Message(const std::string& url, const std::string& body) {
  WebhookMessage m;
  m.url = url;
  m.body = body;
  m.label = "test message";
  return m;
}

TEST(WebhookUrlTest, Parses) {
  WebhookUrl u;
  std::string why;
  ASSERT_TRUE(ParseWebhookUrl("https://hooks.slack.com/services/T0/B0/X", &u, &why));
  EXPECT_EQ(u.scheme_host_port, "https://hooks.slack.com");
  EXPECT_EQ(u.path, "/services/T0/B0/X");
  ASSERT_TRUE(ParseWebhookUrl("http://127.0.0.1:8080", &u, &why));
  EXPECT_EQ(u.scheme_host_port, "http://127.0.0.1:8080");
  EXPECT_EQ(u.path, "/");
  EXPECT_FALSE(ParseWebhookUrl("hooks.slack.com/x", &u, &why));
  EXPECT_FALSE(ParseWebhookUrl("http:///path", &u, &why));
  EXPECT_FALSE(ParseWebhookUrl("http://user@host/path", &u, &why));
}

TEST(WebhookSenderTest, DeliversBodiesWithTheToken) {
  Recorder server(200);
  SenderOptions options;
  options.timeout_s = 5;
  WebhookSender sender(options);
  WebhookMessage a = Message(server.url(), R"({"text":"one"})");
  a.bearer_token = "tok123";
  ASSERT_TRUE(sender.Post(a));
  ASSERT_TRUE(sender.Post(Message(server.url(), R"({"text":"two"})")));
  SenderStats stats = sender.Close();
  EXPECT_EQ(stats.delivered, 2);
  EXPECT_EQ(stats.failed + stats.dropped + stats.abandoned, 0);
  EXPECT_EQ(server.bodies(), (std::vector<std::string>{R"({"text":"one"})", R"({"text":"two"})"}));
  EXPECT_EQ(server.auth(), (std::vector<std::string>{"Bearer tok123", ""}));
  EXPECT_EQ(server.types()[0], "application/json");
  EXPECT_TRUE(sender.TakeErrors().empty());
  EXPECT_FALSE(sender.Post(Message(server.url(), "{}"))) << "closed";
}

TEST(WebhookSenderTest, RetriesAFailingServerThenSaysSo) {
  Recorder server(500);
  SenderOptions options;
  options.retries = 2;
  options.retry_delay_s = 0.01;
  WebhookSender sender(options);
  ASSERT_TRUE(sender.Post(Message(server.url(), "{}")));
  SenderStats stats = sender.Close();
  EXPECT_EQ(stats.failed, 1);
  EXPECT_EQ(server.bodies().size(), 3u) << "one attempt and two retries";
  EXPECT_EQ(sender.TakeErrors(),
            std::vector<std::string>{"test message: HTTP 500 after 3 attempts"});
}

TEST(WebhookSenderTest, AClientErrorIsNotRetried) {
  Recorder server(404);
  WebhookSender sender(SenderOptions{});
  sender.Post(Message(server.url(), "{}"));
  sender.Close();
  EXPECT_EQ(server.bodies().size(), 1u);
  EXPECT_EQ(sender.TakeErrors(), std::vector<std::string>{"test message: HTTP 404 after 1 attempt"});
}

TEST(WebhookSenderTest, NobodyListeningFailsQuickly) {
  std::string url;
  {
    Hanging gone;  // a port that was free a moment ago and is closed now
    url = gone.url();
  }
  SenderOptions options;
  options.retries = 1;
  options.retry_delay_s = 0.01;
  WebhookSender sender(options);
  sender.Post(Message(url, "{}"));
  SenderStats stats = sender.Close();
  EXPECT_EQ(stats.failed, 1);
  std::vector<std::string> errors = sender.TakeErrors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("no answer"), std::string::npos) << errors[0];
}

// The loop never waits for a hanging server: Post returns at once, and
// Close gives up after the timeout.
TEST(WebhookSenderTest, AHangingServerDelaysNothingBeyondTheTimeout) {
  Hanging server;
  SenderOptions options;
  options.timeout_s = 0.5;
  options.retries = 5;
  options.queue_limit = 3;
  WebhookSender sender(options);
  auto t0 = std::chrono::steady_clock::now();
  int queued = 0;
  for (int i = 0; i < 6; ++i) queued += sender.Post(Message(server.url(), "{}"));
  double post_s = Since(t0);
  EXPECT_LT(post_s, 0.05) << "Post must not wait for the network";
  // The worker holds one message; the queue takes three more.
  EXPECT_GE(queued, 3);
  EXPECT_LE(queued, 4);
  auto t1 = std::chrono::steady_clock::now();
  SenderStats stats = sender.Close();
  double close_s = Since(t1);
  EXPECT_LT(close_s, 0.5 + 0.3) << "Close waits at most the timeout";
  EXPECT_GE(close_s, 0.45) << "Close does wait for the timeout";
  EXPECT_EQ(stats.delivered, 0);
  EXPECT_EQ(stats.abandoned, queued);
  EXPECT_EQ(stats.dropped, 6 - queued);
  std::printf("hanging server: Post x6 %.4fs, Close %.3fs (timeout 0.5s)\n", post_s, close_s);
}

}  // namespace
}  // namespace ratchet
