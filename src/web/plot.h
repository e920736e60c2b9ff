// `ratchet plot`: the progress chart as a file, SVG or PNG by extension.
#pragma once

#include <string>
#include <vector>

#include "core/experiment.h"
#include "web/chart.h"

namespace ratchet {

struct PlotSize {
  double width = 960;
  double height = 480;
};

/// Draws the chart of `experiments` to `out_path` (.svg or .png, chosen by
/// extension), written to a temporary file and renamed into place. False
/// with a message on an unknown extension or a write failure.
bool WritePlot(const std::vector<Experiment>& experiments, const ChartOptions& options,
               const std::string& out_path, const PlotSize& size, std::string* err);

/// The SVG document of the chart (what WritePlot writes for .svg).
std::string PlotSvg(const std::vector<Experiment>& experiments, const ChartOptions& options,
                    const PlotSize& size);

}  // namespace ratchet
