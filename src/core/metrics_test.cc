#include "core/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ratchet {
namespace {

TEST(MetricsTest, AutoresearchSummary) {
  auto m = ParseSummary(
      "step 1 loss: 3.2\nprogress: elapsed=1.0 loss=3.2\n---\nval_bpb:          0.997900\n"
      "training_seconds: 300.1\nmfu_percent: 39.8%\nnote: hello\n");
  EXPECT_DOUBLE_EQ(m.at("val_bpb"), 0.9979);
  EXPECT_DOUBLE_EQ(m.at("training_seconds"), 300.1);
  EXPECT_DOUBLE_EQ(m.at("mfu_percent"), 39.8);
  EXPECT_EQ(m.count("loss"), 0u);  // before the last ---
  EXPECT_EQ(m.count("note"), 0u);  // not a number
}

TEST(MetricsTest, LastSummaryAndLastLineWin) {
  auto m = ParseSummary("---\nscore: 1\n---\nscore: 2\nscore: 3\n");
  EXPECT_DOUBLE_EQ(m.at("score"), 3);
}

TEST(MetricsTest, NoSeparatorScansEverything) {
  auto m = ParseSummary("progress: elapsed=3\nscore: 4.5\r\n");
  EXPECT_DOUBLE_EQ(m.at("score"), 4.5);
  EXPECT_EQ(m.count("progress"), 0u);
}

TEST(MetricsTest, NanAndInfAreKeptForTheCallerToReject) {
  auto m = ParseSummary("---\nval_bpb: nan\nloss: inf\n");
  EXPECT_TRUE(std::isnan(m.at("val_bpb")));
  EXPECT_TRUE(std::isinf(m.at("loss")));
}

TEST(MetricsTest, Regex) {
  double v = 0;
  EXPECT_TRUE(ParseMetricRegex("acc=0.5\nacc=0.75\n", "acc=([0-9.]+)", &v));
  EXPECT_DOUBLE_EQ(v, 0.75);
  EXPECT_FALSE(ParseMetricRegex("nothing", "acc=([0-9.]+)", &v));
}

TEST(MetricsTest, ProgressLine) {
  EXPECT_TRUE(IsProgressLine("progress: elapsed=12.3 loss=2.41"));
  EXPECT_FALSE(IsProgressLine("val_bpb: 1.0"));
}

}  // namespace
}  // namespace ratchet
