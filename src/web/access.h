// Who may talk to the dashboard. Pure policy, tested without a socket:
// where the server may listen, and whether one request may be answered.
#pragma once

#include <string>

namespace ratchet {

/// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackAddress(const std::string& host);

/// A server on a non-loopback address is reachable by other machines: it
/// must have a token. False with a message a user can act on otherwise.
bool CheckBindPolicy(const std::string& host, const std::string& token, std::string* err);

struct RequestAuth {
  std::string authorization;  // the Authorization header ("Bearer <token>"), or ""
  std::string query_token;    // the `token` query parameter, or ""
  std::string host_header;    // the Host header, or ""
};

enum class AccessDecision {
  kAllow,
  kUnauthorized,  // 401: a token is required and this request lacks the right one
  kForbidden,     // 403: Host is not a loopback name on a token-less loopback server
};

/// With a token: the request must carry it (header or query parameter),
/// compared in constant time. Without one (loopback only): the Host header
/// must name a loopback host, which stops a web page the user visits from
/// reading the dashboard through DNS rebinding.
AccessDecision CheckRequest(const RequestAuth& request, const std::string& token);

}  // namespace ratchet
