// A few lines of HTTP over a plain socket for the server tests: the request
// line goes out byte for byte (no client library normalises "/../"), and
// reads stop at a deadline instead of sleeping.
#pragma once

#include <string>

namespace ratchet {

struct RawResponse {
  int status = 0;  // 0: no answer
  std::string head;
  std::string body;
};

/// Sends `request` (a whole HTTP/1.1 request; "Connection: close" is best)
/// to 127.0.0.1:port and reads until the peer closes or `timeout_s` passes.
RawResponse RawRequest(int port, const std::string& request, double timeout_s = 5);

/// A GET with Host 127.0.0.1 and Connection: close, plus `extra_headers`
/// ("Name: value\r\n" lines).
RawResponse RawGet(int port, const std::string& target, const std::string& extra_headers = "");

/// An open connection that reads a server-sent event stream.
class EventStream {
 public:
  EventStream(int port, const std::string& target);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;
  /// Reads until the received text contains `needle` after `from` or the
  /// deadline passes. Returns the offset just past it, or npos.
  size_t WaitFor(const std::string& needle, size_t from, double timeout_s);
  const std::string& text() const { return text_; }

 private:
  int fd_ = -1;
  std::string text_;
};

}  // namespace ratchet
