#include "web/plot.h"

#include <cstdio>
#include <fstream>

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
  const std::string tmp = out_path + ".tmp";
  if (EndsWith(out_path, ".svg")) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << PlotSvg(experiments, options, size);
    out.close();
    if (!out) {
      *err = "cannot write " + tmp;
      std::remove(tmp.c_str());
      return false;
    }
  } else if (EndsWith(out_path, ".png")) {
    // Twice the resolution: sharp in a README on a high-density screen.
    CairoPainter painter(size.width, size.height, 2);
    DrawChart(BuildChartModel(experiments, options), size.width, size.height, &painter);
    if (!painter.WritePng(tmp, err)) {
      std::remove(tmp.c_str());
      return false;
    }
  } else {
    *err = "cannot tell the format of " + out_path + ": name it .svg or .png";
    return false;
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    *err = "cannot rename " + tmp + " to " + out_path;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace ratchet
