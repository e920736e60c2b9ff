#include "web/cairo_painter.h"

#include <cairo.h>

#include <cmath>

namespace ratchet {
namespace {

void SetColor(cairo_t* cr, Color c) {
  cairo_set_source_rgb(cr, ((c >> 16) & 0xFF) / 255.0, ((c >> 8) & 0xFF) / 255.0,
                       (c & 0xFF) / 255.0);
}

}  // namespace

CairoPainter::CairoPainter(double width, double height, double scale) {
  surface_ = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(width * scale),
                                        static_cast<int>(height * scale));
  cr_ = cairo_create(surface_);
  cairo_scale(cr_, scale, scale);
  cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
}

CairoPainter::~CairoPainter() {
  cairo_destroy(cr_);
  cairo_surface_destroy(surface_);
}

void CairoPainter::ApplyStroke(const Stroke& stroke) {
  SetColor(cr_, stroke.color);
  cairo_set_line_width(cr_, stroke.width);
  const double dash[] = {6, 4};
  cairo_set_dash(cr_, dash, stroke.dashed ? 2 : 0, 0);
}

// Paints the current path, then clears it.
void CairoPainter::FillAndStroke(Color fill, const Stroke& stroke) {
  if (fill != kNone) {
    SetColor(cr_, fill);
    cairo_fill_preserve(cr_);
  }
  if (stroke.color != kNone) {
    ApplyStroke(stroke);
    cairo_stroke_preserve(cr_);
  }
  cairo_new_path(cr_);
}

void CairoPainter::Rect(double x, double y, double w, double h, Color fill, const Stroke& stroke) {
  cairo_rectangle(cr_, x, y, w, h);
  FillAndStroke(fill, stroke);
}

void CairoPainter::Polyline(const std::vector<Point2>& points, const Stroke& stroke) {
  if (points.empty() || stroke.color == kNone) return;
  cairo_move_to(cr_, points[0].x, points[0].y);
  for (size_t i = 1; i < points.size(); ++i) cairo_line_to(cr_, points[i].x, points[i].y);
  ApplyStroke(stroke);
  cairo_stroke(cr_);
}

void CairoPainter::Circle(double cx, double cy, double r, Color fill, const Stroke& stroke,
                          const std::string&, const std::string&) {
  cairo_new_sub_path(cr_);
  cairo_arc(cr_, cx, cy, r, 0, 2 * M_PI);
  FillAndStroke(fill, stroke);
}

void CairoPainter::Cross(double cx, double cy, double r, const Stroke& stroke, const std::string&,
                         const std::string&) {
  Polyline({{cx - r, cy - r}, {cx + r, cy + r}}, stroke);
  Polyline({{cx - r, cy + r}, {cx + r, cy - r}}, stroke);
}

void CairoPainter::Text(double x, double y, const std::string& text, const TextStyle& style,
                        const std::string&) {
  cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         style.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, style.size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr_, text.c_str(), &ext);
  double dx = style.anchor == TextStyle::Anchor::kStart    ? 0
              : style.anchor == TextStyle::Anchor::kMiddle ? -ext.x_advance / 2
                                                           : -ext.x_advance;
  SetColor(cr_, style.color);
  cairo_move_to(cr_, x + dx, y);
  cairo_show_text(cr_, text.c_str());
  cairo_new_path(cr_);
}

bool CairoPainter::EncodePng(std::string* png, std::string* err) {
  cairo_surface_flush(surface_);
  png->clear();
  auto append = [](void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
  };
  cairo_status_t status = cairo_surface_write_to_png_stream(surface_, append, png);
  if (status != CAIRO_STATUS_SUCCESS) {
    *err = std::string("cannot encode the PNG: ") + cairo_status_to_string(status);
    return false;
  }
  return true;
}

}  // namespace ratchet
