#include "web/chart.h"

#include <cairo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "web/plot.h"

namespace ratchet {
namespace {

Experiment Exp(int id, Status status, std::optional<double> metric, std::string desc) {
  Experiment e;
  e.id = id;
  e.phase = Phase::kDone;
  e.status = status;
  e.metric = metric;
  e.description = std::move(desc);
  e.baseline = id == 1;
  return e;
}

std::vector<Experiment> SmallLoop() {
  return {Exp(1, Status::kKeep, 1.00, "baseline"),
          Exp(2, Status::kDiscard, 1.02, "wider mlp"),
          Exp(3, Status::kKeep, 0.95, "lower learning rate"),
          Exp(4, Status::kCrash, std::nullopt, "fused attention"),
          Exp(5, Status::kTimeout, 0.90, "deeper model"),  // metric, but timed out
          Exp(6, Status::kKeep, 0.93, "warmdown 40%"),
          Exp(7, Status::kDiscard, 55.0, "diverged")};
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ChartTest, ModelSeparatesValuesFromFailures) {
  ChartModel m = BuildChartModel(SmallLoop(), ChartOptions{"val_bpb", true, 0.9, ""});
  ASSERT_EQ(m.marks.size(), 5u);
  ASSERT_EQ(m.failures.size(), 2u);  // the crash, and the timeout despite its metric
  EXPECT_EQ(m.failures[0].id, 4);
  EXPECT_EQ(m.failures[1].id, 5);
  EXPECT_EQ(m.points(), 7u);
  // Running best: baseline, then each keep.
  ASSERT_EQ(m.best.size(), 3u);
  EXPECT_EQ(m.best[1], std::make_pair(3, 0.95));
  EXPECT_EQ(m.best[2], std::make_pair(6, 0.93));
  // The target is in range; the diverged run is clipped, not stretching it.
  EXPECT_LE(m.y_lo, 0.9);
  EXPECT_LT(m.y_hi, 2.0);
  EXPECT_TRUE(m.marks.back().clipped);
  EXPECT_EQ(m.x_max, 7);
}

TEST(ChartTest, UndecidedExperimentsAreLeftOut) {
  auto exps = SmallLoop();
  Experiment running;
  running.id = 8;
  running.phase = Phase::kRunning;
  exps.push_back(running);
  EXPECT_EQ(BuildChartModel(exps, {}).points(), 7u);
}

TEST(ChartTest, NiceTicks) {
  auto t = NiceTicks(0.91, 1.04, 6);
  ASSERT_FALSE(t.empty());
  EXPECT_GE(t.front(), 0.91);
  EXPECT_LE(t.back(), 1.04);
  EXPECT_NEAR(t[1] - t[0], 0.02, 1e-12);
  EXPECT_TRUE(NiceTicks(1, 1, 5).empty());
}

TEST(ChartTest, SvgHasEveryPointAndKeptLabels) {
  std::string svg = PlotSvg(SmallLoop(), ChartOptions{"val_bpb", true, 0.9, ""}, PlotSize{});
  EXPECT_EQ(Count(svg, "<circle class=\"kept\""), 3u);
  EXPECT_EQ(Count(svg, "<circle class=\"point"), 2u);
  EXPECT_EQ(Count(svg, "<path class=\"crash\""), 2u);
  EXPECT_NE(svg.find(">lower learning rate</text>"), std::string::npos);
  EXPECT_NE(svg.find(">warmdown 40%</text>"), std::string::npos);
  EXPECT_NE(svg.find(">target</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>#4 crash: fused attention</title>"), std::string::npos);
}

TEST(ChartTest, SvgEscapesDescriptions) {
  auto exps = SmallLoop();
  exps[2].description = "<script>alert(1)</script> & co";
  std::string svg = PlotSvg(exps, {}, PlotSize{});
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
}

TEST(ChartTest, PngIsARealImageWithKeptPoints) {
  auto dir = std::filesystem::temp_directory_path() / ("ratchet_plot_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "progress.png").string();
  std::string err;
  ASSERT_TRUE(
      WritePlot(SmallLoop(), ChartOptions{"val_bpb", true, 0.9, ""}, path, PlotSize{}, &err))
      << err;
  cairo_surface_t* img = cairo_image_surface_create_from_png(path.c_str());
  ASSERT_EQ(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
  EXPECT_EQ(cairo_image_surface_get_width(img), 1920);
  EXPECT_EQ(cairo_image_surface_get_height(img), 960);
  // Kept points are drawn in the kept green (0x1a9850).
  const unsigned char* data = cairo_image_surface_get_data(img);
  int stride = cairo_image_surface_get_stride(img);
  int green = 0;
  for (int y = 0; y < 960; ++y) {
    const uint32_t* row = reinterpret_cast<const uint32_t*>(data + y * stride);
    for (int x = 0; x < 1920; ++x) green += (row[x] & 0xFFFFFF) == 0x1a9850;
  }
  EXPECT_GT(green, 3 * 50);  // three discs of radius 10 pixels at scale 2
  cairo_surface_destroy(img);
  EXPECT_FALSE(WritePlot(SmallLoop(), {}, (dir / "progress.gif").string(), PlotSize{}, &err));
  EXPECT_NE(err.find(".svg or .png"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ratchet
