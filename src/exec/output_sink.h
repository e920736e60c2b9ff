// Where a run's output goes: a capped log file, a tail kept in memory, and a
// callback per line. Pure bookkeeping over bytes, tested without processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ratchet {

class OutputSink {
 public:
  /// Lines longer than this reach on_line in pieces of this size.
  static constexpr size_t kMaxLine = 64 << 10;

  /// log_fd: where the first log_limit bytes go (-1: no log; not owned).
  /// on_line may be empty.
  OutputSink(int log_fd, uint64_t log_limit, size_t tail_bytes,
             std::function<void(std::string_view)> on_line);

  /// Takes the next bytes of output, in order.
  void Add(const char* data, size_t n);

  /// The output has ended: passes a last line that has no newline to on_line,
  /// and when output was dropped, appends to the log a note line
  /// ("[ratchet: N bytes of output dropped; the last M follow]") and the part
  /// of the tail that is not already in the log.
  void Finish();

  uint64_t total_bytes() const { return total_; }
  /// True when some output is in neither the log's head nor its tail.
  bool truncated() const;
  /// The last tail_bytes of output.
  std::string tail() const;
  /// The first error writing the log ("" if none); output is still counted.
  const std::string& log_error() const { return log_error_; }

 private:
  void WriteLog(const char* data, size_t n);
  void SplitLines(const char* data, size_t n);

  int log_fd_;
  uint64_t log_limit_;
  size_t tail_bytes_;
  std::function<void(std::string_view)> on_line_;
  uint64_t total_ = 0;
  uint64_t logged_ = 0;  // bytes of the head written to the log
  std::string tail_;     // holds at least the last tail_bytes_ (trimmed lazily)
  std::string line_;     // the current incomplete line
  bool last_logged_newline_ = true;
  std::string log_error_;
};

}  // namespace ratchet
