#include "base/check.h"

#include <gtest/gtest.h>

namespace ratchet {
namespace {

int Checked(int n) {
  RATCHET_CHECK(n > 0, "a positive count");
  return n;
}

TEST(CheckTest, AHoldingInvariantCostsNothingVisible) { EXPECT_EQ(Checked(3), 3); }

TEST(CheckDeathTest, ABrokenInvariantStopsAndNamesThePlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(Checked(0),
               "ratchet: internal error at .*check_test.cc:[0-9]+: a positive count \\(n > 0 does "
               "not hold\\)");
}

}  // namespace
}  // namespace ratchet
