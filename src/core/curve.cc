#include "core/curve.h"

#include <cctype>
#include <string>

#include "core/metrics.h"

namespace ratchet {

bool ParseProgressLine(std::string_view line, double t, CurvePoint* out) {
  if (!IsProgressLine(line)) return false;
  line.remove_prefix(line.find("progress:") + 9);
  CurvePoint point;
  point.t = t;
  while (!line.empty()) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())))
      line.remove_prefix(1);
    size_t end = 0;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    std::string_view word = line.substr(0, end);
    line.remove_prefix(end);
    size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == word.size()) continue;
    double value = 0;
    if (ParseNumber(word.substr(eq + 1), &value)) point.values[std::string(word.substr(0, eq))] = value;
  }
  if (point.values.empty()) return false;
  *out = std::move(point);
  return true;
}

void AppendPoint(Curve* curve, CurvePoint point, size_t max_points) {
  if (max_points < 2) max_points = 2;
  if (curve->size() >= max_points) {
    // Keep points 0, 2, 4, ... and the newest: the shape survives, the
    // resolution halves.
    Curve thinned;
    for (size_t i = 0; i < curve->size(); i += 2) thinned.push_back(std::move((*curve)[i]));
    *curve = std::move(thinned);
  }
  curve->push_back(std::move(point));
}

bool ValueAt(const Curve& curve, const std::string& key, double t, double* value) {
  const CurvePoint* before = nullptr;
  for (const CurvePoint& p : curve) {
    auto it = p.values.find(key);
    if (it == p.values.end()) continue;
    if (p.t <= t) {
      before = &p;
      continue;
    }
    if (!before) return false;
    const double a = before->values.at(key), b = it->second;
    const double w = (t - before->t) / (p.t - before->t);
    *value = a + (b - a) * w;
    return true;
  }
  if (!before) return false;
  *value = before->values.at(key);
  return true;
}

}  // namespace ratchet
