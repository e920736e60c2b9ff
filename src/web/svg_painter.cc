#include "web/svg_painter.h"

#include <cstdio>

namespace ratchet {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Hex(Color c) {
  if (c == kNone) return "none";
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", c & 0xFFFFFFu);
  return buf;
}

std::string StrokeAttrs(const Stroke& s) {
  if (s.color == kNone) return " stroke=\"none\"";
  std::string a = " stroke=\"" + Hex(s.color) + "\" stroke-width=\"" + Num(s.width) + "\"";
  if (s.dashed) a += " stroke-dasharray=\"6 4\"";
  return a;
}

std::string TitleElement(const std::string& title) {
  return title.empty() ? "" : "<title>" + XmlEscape(title) + "</title>";
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // Control characters other than tab/newline are not allowed in XML.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

SvgPainter::SvgPainter(double width, double height) {
  out_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) + "\" height=\"" +
         Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
}

void SvgPainter::BeginGroup(const std::string& css_class) {
  out_ += "<g class=\"" + XmlEscape(css_class) + "\">\n";
}

void SvgPainter::EndGroup() { out_ += "</g>\n"; }

void SvgPainter::Rect(double x, double y, double w, double h, Color fill, const Stroke& stroke) {
  out_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
          Num(h) + "\" fill=\"" + Hex(fill) + "\"" + StrokeAttrs(stroke) + "/>\n";
}

void SvgPainter::Polyline(const std::vector<Point2>& points, const Stroke& stroke) {
  if (points.empty()) return;
  std::string d;
  for (size_t i = 0; i < points.size(); ++i) {
    d += (i == 0 ? "M" : " L") + Num(points[i].x) + " " + Num(points[i].y);
  }
  out_ += "<path d=\"" + d + "\" fill=\"none\"" + StrokeAttrs(stroke) + "/>\n";
}

void SvgPainter::Circle(double cx, double cy, double r, Color fill, const Stroke& stroke,
                        const std::string& css_class, const std::string& title) {
  out_ += "<circle class=\"" + XmlEscape(css_class) + "\" cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) +
          "\" r=\"" + Num(r) + "\" fill=\"" + Hex(fill) + "\"" + StrokeAttrs(stroke) + ">" +
          TitleElement(title) + "</circle>\n";
}

void SvgPainter::Cross(double cx, double cy, double r, const Stroke& stroke,
                       const std::string& css_class, const std::string& title) {
  out_ += "<path class=\"" + XmlEscape(css_class) + "\" d=\"M" + Num(cx - r) + " " + Num(cy - r) +
          " L" + Num(cx + r) + " " + Num(cy + r) + " M" + Num(cx - r) + " " + Num(cy + r) + " L" +
          Num(cx + r) + " " + Num(cy - r) + "\" fill=\"none\"" + StrokeAttrs(stroke) + ">" +
          TitleElement(title) + "</path>\n";
}

void SvgPainter::Text(double x, double y, const std::string& text, const TextStyle& style,
                      const std::string& css_class) {
  const char* anchor = style.anchor == TextStyle::Anchor::kStart    ? "start"
                       : style.anchor == TextStyle::Anchor::kMiddle ? "middle"
                                                                    : "end";
  out_ += "<text class=\"" + XmlEscape(css_class) + "\" x=\"" + Num(x) + "\" y=\"" + Num(y) +
          "\" font-size=\"" + Num(style.size) + "\" fill=\"" + Hex(style.color) +
          "\" text-anchor=\"" + anchor + "\"" + (style.bold ? " font-weight=\"bold\"" : "") + ">" +
          XmlEscape(text) + "</text>\n";
}

std::string SvgPainter::Finish() { return out_ + "</svg>\n"; }

}  // namespace ratchet
