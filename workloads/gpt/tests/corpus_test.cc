// Corpus checks and the deterministic split.
#include "prepare/corpus.h"

#include <gtest/gtest.h>

#include <string>

#include "prepare/protocol.h"

namespace gpt {
namespace {

std::string Text(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i)
    s += "word" + std::to_string(i % 97) + (i % 13 ? " " : "\n");
  s.resize(n);
  return s;
}

TEST(Utf8, AcceptsValidText) {
  size_t bad = 0;
  EXPECT_TRUE(IsValidUtf8("plain ASCII\n", &bad));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", &bad));  // 2, 3, 4 bytes
}

TEST(Utf8, FindsTheFirstBadByte) {
  size_t bad = 0;
  EXPECT_FALSE(IsValidUtf8("ok \xe9t\xe9", &bad));  // latin1
  EXPECT_EQ(bad, 3u);
  EXPECT_FALSE(IsValidUtf8("ab\xc3", &bad));  // truncated sequence
  EXPECT_EQ(bad, 2u);
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf", &bad));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80", &bad));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80", &bad));  // past U+10FFFF
}

TEST(Split, IsDeterministicAndComplete) {
  const std::string text = Text(1000000);
  Splits a, b;
  std::string err;
  ASSERT_TRUE(SplitCorpus(text, kEvalContext, &a, &err)) << err;
  ASSERT_TRUE(SplitCorpus(text, kEvalContext, &b, &err)) << err;
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.val, b.val);
  EXPECT_EQ(a.train.size() + a.val.size() + a.audit.size(), text.size());
  // val is chunk 19 of every 40, audit chunk 39.
  EXPECT_EQ(a.val.substr(0, 100), text.substr(kValChunk * kChunkBytes, 100));
  EXPECT_EQ(a.audit.substr(0, 100), text.substr(kAuditChunk * kChunkBytes, 100));
  EXPECT_EQ(a.val.size(), 2 * kChunkBytes);  // chunks 19 and 59 of 62
}

TEST(Split, SmallCorpusGetsSmallerChunks) {
  const size_t size = kSplitPeriod * (kEvalContext + 1);
  Splits s;
  std::string err;
  ASSERT_TRUE(SplitCorpus(Text(size), kEvalContext, &s, &err)) << err;
  EXPECT_EQ(s.val.size(), static_cast<size_t>(kEvalContext + 1));
  EXPECT_EQ(s.audit.size(), static_cast<size_t>(kEvalContext + 1));
}

TEST(Split, RefusesEmptyNonUtf8AndTooSmall) {
  Splits s;
  std::string err;
  EXPECT_FALSE(SplitCorpus("", kEvalContext, &s, &err));
  EXPECT_EQ(err, "the corpus is empty");
  EXPECT_FALSE(SplitCorpus(Text(50000) + "\xff", kEvalContext, &s, &err));
  EXPECT_NE(err.find("not valid UTF-8 (first bad byte at offset 50000)"), std::string::npos) << err;
  EXPECT_FALSE(SplitCorpus(Text(kSplitPeriod * (kEvalContext + 1) - 1), kEvalContext, &s, &err));
  EXPECT_NE(err.find("too small for context 256"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpt
