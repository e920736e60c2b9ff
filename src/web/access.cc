#include "web/access.h"

#include <arpa/inet.h>

namespace ratchet {
namespace {

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  // The length is not secret enough to hide; the content is.
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// "host:port", "[v6]:port" or "host" -> host.
std::string HostWithoutPort(const std::string& host) {
  if (!host.empty() && host[0] == '[') {
    size_t end = host.find(']');
    return end == std::string::npos ? host : host.substr(1, end - 1);
  }
  size_t colon = host.find(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

}  // namespace

bool IsLoopbackAddress(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

bool CheckBindPolicy(const std::string& host, const std::string& token, std::string* err) {
  if (host.empty()) {
    *err = "no address to listen on";
    return false;
  }
  if (IsLoopbackAddress(host) || !token.empty()) return true;
  *err = "refusing to serve on " + host +
         " without --token: other machines could read the loop (use --token SECRET, "
         "or keep the default --host 127.0.0.1)";
  return false;
}

AccessDecision CheckRequest(const RequestAuth& request, const std::string& token) {
  if (token.empty()) {
    std::string host = HostWithoutPort(request.host_header);
    return IsLoopbackAddress(host) ? AccessDecision::kAllow : AccessDecision::kForbidden;
  }
  const std::string bearer = "Bearer ";
  bool ok = false;
  if (request.authorization.compare(0, bearer.size(), bearer) == 0) {
    ok = ConstantTimeEquals(request.authorization.substr(bearer.size()), token);
  }
  if (!ok && !request.query_token.empty()) ok = ConstantTimeEquals(request.query_token, token);
  return ok ? AccessDecision::kAllow : AccessDecision::kUnauthorized;
}

}  // namespace ratchet
