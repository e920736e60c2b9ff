// A Painter that draws with cairo into an image, written as PNG.
#pragma once

#include <string>

#include "web/painter.h"

typedef struct _cairo_surface cairo_surface_t;
typedef struct _cairo cairo_t;

namespace ratchet {

class CairoPainter : public Painter {
 public:
  /// `scale` > 1 draws a sharper image with the same layout (2 = retina).
  CairoPainter(double width, double height, double scale = 1);
  ~CairoPainter() override;
  CairoPainter(const CairoPainter&) = delete;
  CairoPainter& operator=(const CairoPainter&) = delete;

  void BeginGroup(const std::string&) override {}
  void EndGroup() override {}
  void Rect(double x, double y, double w, double h, Color fill, const Stroke& stroke) override;
  void Polyline(const std::vector<Point2>& points, const Stroke& stroke) override;
  void Circle(double cx, double cy, double r, Color fill, const Stroke& stroke,
              const std::string& css_class, const std::string& title) override;
  void Cross(double cx, double cy, double r, const Stroke& stroke, const std::string& css_class,
             const std::string& title) override;
  void Text(double x, double y, const std::string& text, const TextStyle& style,
            const std::string& css_class) override;

  /// The image as PNG bytes in *png. False with a message if it cannot.
  bool EncodePng(std::string* png, std::string* err);

 private:
  void ApplyStroke(const Stroke& stroke);
  void FillAndStroke(Color fill, const Stroke& stroke);
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

}  // namespace ratchet
