#include "core/glob.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

TEST(GlobMatch, Literal) {
  EXPECT_TRUE(GlobMatch("train.py", "train.py"));
  EXPECT_FALSE(GlobMatch("train.py", "train.pyc"));
  EXPECT_FALSE(GlobMatch("train.py", "src/train.py"));  // anchored at the root
  EXPECT_TRUE(GlobMatch("src/train.py", "src/train.py"));
  EXPECT_FALSE(GlobMatch("", "train.py"));
  EXPECT_FALSE(GlobMatch("train.py", ""));
}

TEST(GlobMatch, StarStaysInOneSegment) {
  EXPECT_TRUE(GlobMatch("*.py", "train.py"));
  EXPECT_TRUE(GlobMatch("*.py", ".py"));
  EXPECT_FALSE(GlobMatch("*.py", "src/train.py"));
  EXPECT_TRUE(GlobMatch("src/*.py", "src/train.py"));
  EXPECT_FALSE(GlobMatch("src/*.py", "src/a/train.py"));
  EXPECT_TRUE(GlobMatch("s*c/*", "src/x"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_TRUE(GlobMatch("a*b*c", "abbbc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYYd"));
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("***", "x"));  // repeated stars collapse
}

TEST(GlobMatch, QuestionMark) {
  EXPECT_TRUE(GlobMatch("file?.txt", "file1.txt"));
  EXPECT_FALSE(GlobMatch("file?.txt", "file.txt"));
  EXPECT_FALSE(GlobMatch("file?.txt", "file12.txt"));
  EXPECT_FALSE(GlobMatch("a?b", "a/b"));  // never matches '/'
}

TEST(GlobMatch, Classes) {
  EXPECT_TRUE(GlobMatch("[abc].txt", "b.txt"));
  EXPECT_FALSE(GlobMatch("[abc].txt", "d.txt"));
  EXPECT_TRUE(GlobMatch("v[0-9].cfg", "v7.cfg"));
  EXPECT_FALSE(GlobMatch("v[0-9].cfg", "vx.cfg"));
  EXPECT_TRUE(GlobMatch("[!a]*", "bcd"));
  EXPECT_FALSE(GlobMatch("[!a]*", "abc"));
  EXPECT_TRUE(GlobMatch("[^a]*", "bcd"));
  EXPECT_TRUE(GlobMatch("[]x]", "]"));  // ']' first is a literal
  EXPECT_TRUE(GlobMatch("[a-]", "-"));  // '-' last is a literal
  EXPECT_TRUE(GlobMatch("[a-cx-z]", "y"));
  EXPECT_FALSE(GlobMatch("[a-cx-z]", "m"));
  EXPECT_TRUE(GlobMatch("[*]", "*"));
  EXPECT_FALSE(GlobMatch("[*]", "a"));
  EXPECT_FALSE(GlobMatch("a[/]b", "a/b"));
  // An unterminated class is a literal '['.
  EXPECT_TRUE(GlobMatch("a[b", "a[b"));
  EXPECT_FALSE(GlobMatch("a[b", "ab"));
}

TEST(GlobMatch, Escapes) {
  EXPECT_TRUE(GlobMatch("a\\*b", "a*b"));
  EXPECT_FALSE(GlobMatch("a\\*b", "axb"));
  EXPECT_TRUE(GlobMatch("\\?", "?"));
  EXPECT_FALSE(GlobMatch("\\?", "x"));
}

TEST(GlobMatch, DoubleStarLeading) {
  EXPECT_TRUE(GlobMatch("**/x.py", "x.py"));
  EXPECT_TRUE(GlobMatch("**/x.py", "a/x.py"));
  EXPECT_TRUE(GlobMatch("**/x.py", "a/b/c/x.py"));
  EXPECT_FALSE(GlobMatch("**/x.py", "a/b/y.py"));
  EXPECT_TRUE(GlobMatch("**/*.py", "deep/er/m.py"));
  EXPECT_FALSE(GlobMatch("**/*.py", "deep/er/m.pyc"));
}

TEST(GlobMatch, DoubleStarTrailing) {
  EXPECT_TRUE(GlobMatch("src/**", "src/a"));
  EXPECT_TRUE(GlobMatch("src/**", "src/a/b/c.cc"));
  EXPECT_FALSE(GlobMatch("src/**", "srcx/a"));
  EXPECT_FALSE(GlobMatch("src/**", "lib/src/a"));
  EXPECT_TRUE(GlobMatch("**", "any/thing/at/all"));
}

TEST(GlobMatch, DoubleStarMiddle) {
  EXPECT_TRUE(GlobMatch("a/**/b", "a/b"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/x/b"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/x/y/z/b"));
  EXPECT_FALSE(GlobMatch("a/**/b", "a/x/y/z/c"));
  EXPECT_FALSE(GlobMatch("a/**/b", "x/a/b"));
  EXPECT_TRUE(GlobMatch("a/**/b/**/c", "a/1/b/2/3/c"));
  EXPECT_TRUE(GlobMatch("a/**/**/b", "a/b"));
}

TEST(GlobMatch, DoubleStarInsideSegmentIsStar) {
  EXPECT_TRUE(GlobMatch("a**b", "axxb"));
  EXPECT_FALSE(GlobMatch("a**b", "a/x/b"));
}

TEST(GlobMatch, DirectoryCoversEverythingBelow) {
  EXPECT_TRUE(GlobMatch("prepare", "prepare/data.bin"));
  EXPECT_TRUE(GlobMatch("prepare/", "prepare/data.bin"));
  EXPECT_TRUE(GlobMatch("prepare/", "prepare/sub/deep.bin"));
  EXPECT_TRUE(GlobMatch("prepare", "prepare"));
  EXPECT_FALSE(GlobMatch("prepare", "prepared/data.bin"));
  EXPECT_FALSE(GlobMatch("prepare/", "x/prepare/data.bin"));
  EXPECT_TRUE(GlobMatch("pre*", "prepare/data.bin"));
  EXPECT_TRUE(GlobMatch("**/cache", "a/b/cache/file"));
}

TEST(GlobMatch, NormalisesSeparators) {
  EXPECT_TRUE(GlobMatch("./train.py", "train.py"));
  EXPECT_TRUE(GlobMatch("src//a.py", "src/a.py"));
  EXPECT_TRUE(GlobMatch("src/a.py", "./src//a.py"));
}

TEST(GlobMatch, ManyDoubleStarsStayFast) {
  // Exponential without memoisation: 20 `**` against a 40-deep path.
  std::string pattern, path;
  for (int i = 0; i < 20; ++i) pattern += "**/";
  pattern += "nomatch";
  for (int i = 0; i < 40; ++i) path += "d/";
  path += "file";
  EXPECT_FALSE(GlobMatch(pattern, path));
}

TEST(GlobMatch, StarBacktrackingIsLinearish) {
  std::string name(2000, 'a');
  EXPECT_FALSE(GlobMatch("*a*a*a*a*b", name));
  EXPECT_TRUE(GlobMatch("*a*a*a*a*a", name));
}

TEST(MatchesAny, AnyOfSeveral) {
  std::vector<std::string> globs = {"train.py", "configs/*.toml"};
  EXPECT_TRUE(MatchesAny(globs, "train.py"));
  EXPECT_TRUE(MatchesAny(globs, "configs/small.toml"));
  EXPECT_FALSE(MatchesAny(globs, "prepare.py"));
  EXPECT_FALSE(MatchesAny({}, "train.py"));
}

TEST(GlobMayMatchBelow, PrunesDirectories) {
  EXPECT_TRUE(GlobMayMatchBelow("src/*.py", ""));
  EXPECT_TRUE(GlobMayMatchBelow("src/*.py", "src"));
  EXPECT_FALSE(GlobMayMatchBelow("src/*.py", "data"));
  EXPECT_FALSE(GlobMayMatchBelow("src/*.py", "src/sub"));
  EXPECT_TRUE(GlobMayMatchBelow("src/*.py", "src/odd.py"));  // a directory named odd.py
  EXPECT_FALSE(GlobMayMatchBelow("train.py", "build"));
  EXPECT_TRUE(GlobMayMatchBelow("**/x.py", "deep/down"));
  EXPECT_TRUE(GlobMayMatchBelow("a/**/b", "a/q/r"));
  EXPECT_FALSE(GlobMayMatchBelow("a/**/b", "z"));
  EXPECT_TRUE(GlobMayMatchBelow("prepare", "prepare/sub"));  // covered as a directory
  EXPECT_FALSE(GlobMayMatchBelow("", ""));
  EXPECT_TRUE(AnyMayMatchBelow({"x", "data/*"}, "data"));
  EXPECT_FALSE(AnyMayMatchBelow({"x", "data/*"}, "other"));
}

}  // namespace
}  // namespace ratchet
