#include "base/error.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

TEST(ErrorTest, DefaultIsNoFailure) {
  const Error e;
  EXPECT_TRUE(e.ok());
  EXPECT_TRUE(e.Is(Error::Kind::kNone));
  EXPECT_EQ(e.message(), "");
  std::string err = "untouched";
  EXPECT_TRUE(e.Report(&err));
  EXPECT_EQ(err, "untouched");
}

TEST(ErrorTest, EachFactoryMakesItsKind) {
  const struct {
    Error error;
    Error::Kind kind;
    const char* name;
  } cases[] = {
      {Error::InvalidArgument("m"), Error::Kind::kInvalidArgument, "invalid argument"},
      {Error::NotFound("m"), Error::Kind::kNotFound, "not found"},
      {Error::Corruption("m"), Error::Kind::kCorruption, "corruption"},
      {Error::NotSupported("m"), Error::Kind::kNotSupported, "not supported"},
      {Error::IO("m"), Error::Kind::kIO, "I/O error"},
      {Error::Busy("m"), Error::Kind::kBusy, "busy"},
      {Error::Exhausted("m"), Error::Kind::kExhausted, "exhausted"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(c.error.ok()) << c.name;
    EXPECT_EQ(c.error.kind(), c.kind) << c.name;
    EXPECT_TRUE(c.error.Is(c.kind)) << c.name;
    EXPECT_FALSE(c.error.Is(Error::Kind::kNone)) << c.name;
    EXPECT_STREQ(KindName(c.error.kind()), c.name);
  }
}

TEST(ErrorTest, OfMakesAKindKnownOnlyAtRunTime) {
  EXPECT_TRUE(Error::Of(Error::Kind::kCorruption, "m").Is(Error::Kind::kCorruption));
  EXPECT_EQ(Error::Of(Error::Kind::kBusy, "m").message(), "m");
  EXPECT_TRUE(Error::Of(Error::Kind::kNone, "m").ok());
}

TEST(ErrorTest, ReportPassesTheMessageOn) {
  std::string err;
  EXPECT_FALSE(Error::Busy("another run holds the loop").Report(&err));
  EXPECT_EQ(err, "another run holds the loop");
}

}  // namespace
}  // namespace ratchet
