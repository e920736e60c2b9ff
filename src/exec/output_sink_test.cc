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

TEST(OutputSinkTest, LogHeadNoteAndTail) {
  TempDir dir;
  std::string path = dir.File("log");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  OutputSink sink(fd, 10, 4, nullptr);
  std::string all = "0123456789abcdefghijklmnopqrstuvwxyz\n";
  for (char c : all) sink.Add(&c, 1);
  sink.Finish();
  close(fd);
  EXPECT_TRUE(sink.truncated());
  EXPECT_EQ(ReadFile(path),
            "0123456789\n[ratchet: 23 bytes of output dropped; the last 4 follow]\nxyz\n");
}

TEST(OutputSinkTest, JustOverTheLimitLosesNothing) {
  // The part past the limit still fits in the tail: the log has it all.
  TempDir dir;
  std::string path = dir.File("log");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  OutputSink sink(fd, 10, 8, nullptr);
  std::string all = "0123456789abcdef";
  sink.Add(all.data(), all.size());
  sink.Finish();
  close(fd);
  EXPECT_FALSE(sink.truncated());
  EXPECT_EQ(ReadFile(path), all);
}

TEST(OutputSinkTest, UnderTheLimitIsVerbatim) {
  TempDir dir;
  std::string path = dir.File("log");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  OutputSink sink(fd, 100, 4, nullptr);
  sink.Add("hello\nworld", 11);
  sink.Finish();
  close(fd);
  EXPECT_FALSE(sink.truncated());
  EXPECT_EQ(ReadFile(path), "hello\nworld");
  EXPECT_EQ(sink.tail(), "orld");
}

}  // namespace
}  // namespace ratchet
