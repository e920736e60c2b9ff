// The drawing port of the progress chart. DrawChart (chart.h) draws through
// it once; SvgPainter writes an SVG document and CairoPainter a PNG, so the
// file `ratchet plot` writes and its pixels come from one drawing code path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ratchet {

/// 0xRRGGBB; kNone draws nothing.
using Color = uint32_t;
inline constexpr Color kNone = 0xFFFFFFFFu;

struct Stroke {
  Color color = 0x000000;
  double width = 1;
  bool dashed = false;
};

struct TextStyle {
  double size = 12;
  Color color = 0x333333;
  enum class Anchor { kStart, kMiddle, kEnd } anchor = Anchor::kStart;
  bool bold = false;
};

struct Point2 {
  double x = 0, y = 0;
};

class Painter {
 public:
  virtual ~Painter() = default;
  /// Groups what follows under a class name (SVG `<g class>`); nestable.
  virtual void BeginGroup(const std::string& css_class) = 0;
  virtual void EndGroup() = 0;
  virtual void Rect(double x, double y, double w, double h, Color fill, const Stroke& stroke) = 0;
  virtual void Polyline(const std::vector<Point2>& points, const Stroke& stroke) = 0;
  /// A data point. `css_class` and `title` (a tooltip) describe it in SVG.
  virtual void Circle(double cx, double cy, double r, Color fill, const Stroke& stroke,
                      const std::string& css_class, const std::string& title) = 0;
  /// An x-shaped mark (a failed experiment).
  virtual void Cross(double cx, double cy, double r, const Stroke& stroke,
                     const std::string& css_class, const std::string& title) = 0;
  /// Text with its baseline at y.
  virtual void Text(double x, double y, const std::string& text, const TextStyle& style,
                    const std::string& css_class) = 0;
};

/// Width of `text` in pixels at `size`, estimated the same way for every
/// painter so label placement does not depend on the output format.
double EstimateTextWidth(const std::string& text, double size);

}  // namespace ratchet
