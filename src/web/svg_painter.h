// A Painter that writes an SVG document: real <circle>, <path> and <text>
// elements with class names and <title> tooltips, so the file is readable,
// searchable and checkable by a test.
#pragma once

#include <string>

#include "web/painter.h"

namespace ratchet {

class SvgPainter : public Painter {
 public:
  SvgPainter(double width, double height);
  void BeginGroup(const std::string& css_class) override;
  void EndGroup() override;
  void Rect(double x, double y, double w, double h, Color fill, const Stroke& stroke) override;
  void Polyline(const std::vector<Point2>& points, const Stroke& stroke) override;
  void Circle(double cx, double cy, double r, Color fill, const Stroke& stroke,
              const std::string& css_class, const std::string& title) override;
  void Cross(double cx, double cy, double r, const Stroke& stroke, const std::string& css_class,
             const std::string& title) override;
  void Text(double x, double y, const std::string& text, const TextStyle& style,
            const std::string& css_class) override;

  /// The finished document.
  std::string Finish();

 private:
  std::string out_;
};

/// Escapes & < > " for XML text and attributes.
std::string XmlEscape(const std::string& text);

}  // namespace ratchet
