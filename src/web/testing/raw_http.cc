#include "web/testing/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace ratchet {
namespace {

using Clock = std::chrono::steady_clock;

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads what is available until `deadline`; false once the peer closed.
bool ReadSome(int fd, std::string* out, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return true;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return true;
  char buf[16384];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n <= 0) return false;
  out->append(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

RawResponse RawRequest(int port, const std::string& request, double timeout_s) {
  RawResponse res;
  int fd = Connect(port);
  if (fd < 0 || !SendAll(fd, request)) {
    if (fd >= 0) close(fd);
    return res;
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  std::string text;
  while (Clock::now() < deadline && ReadSome(fd, &text, deadline)) {
  }
  close(fd);
  size_t head_end = text.find("\r\n\r\n");
  if (text.compare(0, 5, "HTTP/") != 0 || head_end == std::string::npos) return res;
  res.status = std::atoi(text.c_str() + text.find(' ') + 1);
  res.head = text.substr(0, head_end);
  res.body = text.substr(head_end + 4);
  return res;
}

RawResponse RawGet(int port, const std::string& target, const std::string& extra_headers) {
  return RawRequest(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\n" + extra_headers + "Connection: close\r\n\r\n");
}

EventStream::EventStream(int port, const std::string& target) {
  fd_ = Connect(port);
  if (fd_ >= 0) {
    SendAll(fd_, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                     "\r\nAccept: text/event-stream\r\n\r\n");
  }
}

EventStream::~EventStream() {
  if (fd_ >= 0) close(fd_);
}

size_t EventStream::WaitFor(const std::string& needle, size_t from, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  while (true) {
    size_t at = text_.find(needle, from);
    if (at != std::string::npos) return at + needle.size();
    if (fd_ < 0 || Clock::now() >= deadline || !ReadSome(fd_, &text_, deadline)) {
      return std::string::npos;
    }
  }
}

}  // namespace ratchet
