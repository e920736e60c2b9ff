#include "exec/output_sink.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace ratchet {

OutputSink::OutputSink(int log_fd, uint64_t log_limit, size_t tail_bytes,
                       std::function<void(std::string_view)> on_line)
    : log_fd_(log_fd),
      log_limit_(log_limit),
      tail_bytes_(tail_bytes),
      on_line_(std::move(on_line)) {}

void OutputSink::Add(const char* data, size_t n) {
  if (n == 0) return;
  total_ += n;
  if (logged_ < log_limit_) {
    size_t head = static_cast<size_t>(std::min<uint64_t>(n, log_limit_ - logged_));
    WriteLog(data, head);
    logged_ += head;
  }
  // Keep the tail amortised: append, and trim only when it is twice too long.
  if (tail_bytes_ > 0) {
    if (n >= tail_bytes_) {
      tail_.assign(data + n - tail_bytes_, tail_bytes_);
    } else {
      tail_.append(data, n);
      if (tail_.size() >= 2 * tail_bytes_) tail_.erase(0, tail_.size() - tail_bytes_);
    }
  }
  if (on_line_) SplitLines(data, n);
}

void OutputSink::SplitLines(const char* data, size_t n) {
  const char* end = data + n;
  while (data < end) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', end - data));
    const char* stop = nl ? nl : end;
    // Pieces of at most kMaxLine, so a run without newlines cannot grow memory.
    while (static_cast<size_t>(stop - data) + line_.size() > kMaxLine) {
      size_t take = kMaxLine - line_.size();
      line_.append(data, take);
      on_line_(line_);
      line_.clear();
      data += take;
    }
    if (!nl) {
      line_.append(data, end - data);
      return;
    }
    if (line_.empty()) {
      on_line_(std::string_view(data, nl - data));
    } else {
      line_.append(data, nl - data);
      on_line_(line_);
      line_.clear();
    }
    data = nl + 1;
  }
}

void OutputSink::WriteLog(const char* data, size_t n) {
  if (log_fd_ < 0 || n == 0) return;
  last_logged_newline_ = data[n - 1] == '\n';
  while (n > 0) {
    ssize_t w = write(log_fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (log_error_.empty()) log_error_ = std::string("writing the log: ") + std::strerror(errno);
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

bool OutputSink::truncated() const {
  if (total_ <= log_limit_) return false;
  uint64_t after_head = total_ - log_limit_;
  return after_head > tail_bytes_;
}

std::string OutputSink::tail() const {
  if (tail_.size() <= tail_bytes_) return tail_;
  return tail_.substr(tail_.size() - tail_bytes_);
}

void OutputSink::Finish() {
  if (on_line_ && !line_.empty()) {
    on_line_(line_);
    line_.clear();
  }
  if (total_ <= log_limit_) return;
  // The head is in the log; what follows it is either still in the tail
  // (write it) or gone (say how much, then write the end).
  uint64_t after_head = total_ - log_limit_;
  uint64_t shown = std::min<uint64_t>(after_head, tail_bytes_);
  std::string t = tail();
  if (after_head > shown) {
    std::string note = last_logged_newline_ ? "" : "\n";
    note += "[ratchet: " + std::to_string(after_head - shown) +
            " bytes of output dropped; the last " + std::to_string(shown) + " follow]\n";
    WriteLog(note.data(), note.size());
  }
  WriteLog(t.data() + (t.size() - shown), shown);
}

}  // namespace ratchet
