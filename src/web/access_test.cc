#include "web/access.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

TEST(AccessTest, LoopbackAddresses) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
  EXPECT_FALSE(IsLoopbackAddress("192.168.1.5"));
  EXPECT_FALSE(IsLoopbackAddress("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("localhost.evil.example"));
  EXPECT_FALSE(IsLoopbackAddress(""));
}

TEST(AccessTest, NonLoopbackBindNeedsToken) {
  std::string err;
  EXPECT_TRUE(CheckBindPolicy("127.0.0.1", "", &err));
  EXPECT_FALSE(CheckBindPolicy("0.0.0.0", "", &err));
  EXPECT_NE(err.find("--token"), std::string::npos) << err;
  EXPECT_TRUE(CheckBindPolicy("0.0.0.0", "s3cret", &err));
}

TEST(AccessTest, TokenRequiredWhenSet) {
  RequestAuth req;
  req.host_header = "example.com:8420";
  EXPECT_EQ(CheckRequest(req, "s3cret"), AccessDecision::kUnauthorized);
  req.authorization = "Bearer wrong!";
  EXPECT_EQ(CheckRequest(req, "s3cret"), AccessDecision::kUnauthorized);
  req.authorization = "Bearer s3cret";
  EXPECT_EQ(CheckRequest(req, "s3cret"), AccessDecision::kAllow);
  req.authorization = "";
  req.query_token = "s3cre";
  EXPECT_EQ(CheckRequest(req, "s3cret"), AccessDecision::kUnauthorized);
  req.query_token = "s3cret";
  EXPECT_EQ(CheckRequest(req, "s3cret"), AccessDecision::kAllow);
}

TEST(AccessTest, TokenlessServerOnlyAnswersLoopbackHosts) {
  RequestAuth req;
  for (const char* host : {"127.0.0.1:8420", "localhost:1", "[::1]:8420", "localhost"}) {
    req.host_header = host;
    EXPECT_EQ(CheckRequest(req, ""), AccessDecision::kAllow) << host;
  }
  for (const char* host : {"attacker.example:8420", "", "10.0.0.1"}) {
    req.host_header = host;
    EXPECT_EQ(CheckRequest(req, ""), AccessDecision::kForbidden) << host;
  }
}

}  // namespace
}  // namespace ratchet
