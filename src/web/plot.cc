#include "web/plot.h"

#include <algorithm>
#include <cctype>

#include "base/durable_file.h"
#include "web/cairo_painter.h"
#include "web/svg_painter.h"

namespace ratchet {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return std::tolower(a) == b; });
}

}  // namespace

std::string PlotSvg(const std::vector<Experiment>& experiments, const ChartOptions& options,
                    const PlotSize& size) {
  SvgPainter painter(size.width, size.height);
  DrawChart(BuildChartModel(experiments, options), size.width, size.height, &painter);
  return painter.Finish();
}

bool WritePlot(const std::vector<Experiment>& experiments, const ChartOptions& options,
               const std::string& out_path, const PlotSize& size, std::string* err) {
  std::string content;
  if (EndsWith(out_path, ".svg")) {
    content = PlotSvg(experiments, options, size);
  } else if (EndsWith(out_path, ".png")) {
    // Twice the resolution: sharp in a README on a high-density screen.
    CairoPainter painter(size.width, size.height, 2);
    DrawChart(BuildChartModel(experiments, options), size.width, size.height, &painter);
    if (!painter.EncodePng(&content, err)) return false;
  } else {
    *err = "cannot tell the format of " + out_path + ": name it .svg or .png";
    return false;
  }
  return ReplaceFile(out_path, content, err);
}

}  // namespace ratchet
