#include "exec/output_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "exec/test_util.h"

namespace ratchet {
namespace {

using testing::ReadFile;
using testing::TempDir;

struct Lines {
  std::vector<std::string> got;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view l) { got.emplace_back(l); };
  }
};

TEST(OutputSinkTest, LinesAcrossChunks) {
  Lines lines;
  OutputSink sink(-1, 1000, 100, lines.fn());
  for (std::string chunk : {"ab", "c\nde", "f\n\ng", "\n", "tail"})
    sink.Add(chunk.data(), chunk.size());
  EXPECT_EQ(lines.got, (std::vector<std::string>{"abc", "def", "", "g"}));
  sink.Finish();
  EXPECT_EQ(lines.got.back(), "tail");
  EXPECT_EQ(sink.total_bytes(), 15u);
  EXPECT_EQ(sink.tail(), "abc\ndef\n\ng\ntail");
}

TEST(OutputSinkTest, LongLinesComeInPieces) {
  Lines lines;
  OutputSink sink(-1, 1 << 30, 100, lines.fn());
  std::string big(OutputSink::kMaxLine * 2 + 10, 'x');
  // Fed a byte at a time and in one piece, the split is the same.
  for (char c : big) sink.Add(&c, 1);
  sink.Add("\n", 1);
  sink.Add(big.data(), big.size());
  sink.Add("\n", 1);
  std::string exact(OutputSink::kMaxLine, 'y');
  sink.Add((exact + "\n").data(), exact.size() + 1);
  sink.Finish();
  ASSERT_EQ(lines.got.size(), 7u);
  for (int i : {0, 1, 3, 4}) EXPECT_EQ(lines.got[i].size(), OutputSink::kMaxLine);
  EXPECT_EQ(lines.got[2], std::string(10, 'x'));
  EXPECT_EQ(lines.got[5], std::string(10, 'x'));
  EXPECT_EQ(lines.got[6], exact);  // exactly the limit: one line, not two
}

TEST(OutputSinkTest, TailKeepsTheLastBytes) {
  OutputSink sink(-1, 0, 5, nullptr);
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    std::string s = std::to_string(i);
    all += s;
    sink.Add(s.data(), s.size());
    ASSERT_EQ(sink.tail(), all.substr(all.size() > 5 ? all.size() - 5 : 0));
  }
  std::string big(100, 'z');
  sink.Add(big.data(), big.size());
  EXPECT_EQ(sink.tail(), "zzzzz");
}

// Feeds `chunks` to a sink writing a log file; returns the file's content.
struct Logged {
  std::string log;
  bool truncated = false;
  std::string tail;
};
Logged LogOf(uint64_t limit, size_t tail_bytes, const std::vector<std::string>& chunks) {
  TempDir dir;
  std::string path = dir.File("log");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  OutputSink sink(fd, limit, tail_bytes, nullptr);
  for (const std::string& c : chunks) sink.Add(c.data(), c.size());
  sink.Finish();
  close(fd);
  return {ReadFile(path), sink.truncated(), sink.tail()};
}

TEST(OutputSinkTest, LogHeadNoteAndTail) {
  std::vector<std::string> bytes;
  for (char c : std::string("0123456789abcdefghijklmnopqrstuvwxyz\n")) bytes.emplace_back(1, c);
  Logged l = LogOf(10, 4, bytes);
  EXPECT_TRUE(l.truncated);
  EXPECT_EQ(l.log, "0123456789\n[ratchet: 23 bytes of output dropped; the last 4 follow]\nxyz\n");
}

TEST(OutputSinkTest, JustOverTheLimitLosesNothing) {
  // The part past the limit still fits in the tail: the log has it all.
  Logged l = LogOf(10, 8, {"0123456789abcdef"});
  EXPECT_FALSE(l.truncated);
  EXPECT_EQ(l.log, "0123456789abcdef");
}

TEST(OutputSinkTest, UnderTheLimitIsVerbatim) {
  Logged l = LogOf(100, 4, {"hello\n", "world"});
  EXPECT_FALSE(l.truncated);
  EXPECT_EQ(l.log, "hello\nworld");
  EXPECT_EQ(l.tail, "orld");
}

}  // namespace
}  // namespace ratchet
