#include "web/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ratchet {
namespace {

constexpr Color kKeptColor = 0x1a9850;
constexpr Color kOtherColor = 0x9aa5b1;
constexpr Color kFailColor = 0xd73027;
constexpr Color kBestColor = 0x1b5e20;
constexpr Color kTargetColor = 0x3f6fb5;
constexpr Color kAxisColor = 0x555555;
constexpr Color kGridColor = 0xe3e6ea;
constexpr size_t kLabelChars = 30;
// On a long loop only the latest keeps get a label: the chart stays readable
// and placing them stays cheap (the page does the same on every update).
constexpr int kLabelTries = 200;
constexpr int kMaxLabels = 40;

struct Box {
  double x0, y0, x1, y1;
  bool Overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

std::string Truncate(const std::string& text, size_t max_chars) {
  // Cut on a UTF-8 character boundary.
  size_t chars = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (chars == max_chars) break;
      ++chars;
    }
  }
  if (i >= text.size()) return text;
  return text.substr(0, i) + "\u2026";
}

std::string FormatTick(double value, double step) {
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 12), value);
  return buf;
}

std::string MarkTitle(int id, const std::string& status, const std::string& description,
                      const double* value) {
  std::string title = "#" + std::to_string(id) + " " + status;
  if (value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.6g", *value);
    title += buf;
  }
  if (!description.empty()) title += ": " + description;
  return title;
}

}  // namespace

double EstimateTextWidth(const std::string& text, double size) {
  size_t chars = 0;
  for (char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return 0.58 * size * static_cast<double>(chars);
}

bool HasChartValue(const Experiment& exp) {
  if (!exp.metric || !std::isfinite(*exp.metric)) return false;
  switch (exp.status) {
    case Status::kKeep:
    case Status::kDiscard:
    case Status::kGateFailed:
    case Status::kPruned:
      return true;
    case Status::kNone:
      return exp.baseline && exp.phase >= Phase::kDecided;
    default:
      return false;
  }
}

std::vector<double> NiceTicks(double lo, double hi, int target_count) {
  std::vector<double> ticks;
  if (!(hi > lo) || target_count < 1) return ticks;
  double raw = (hi - lo) / target_count;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  // The step whose tick count comes closest to the one asked for.
  double step = mag;
  for (double m : {2.0, 5.0, 10.0}) {
    if (std::abs((hi - lo) / (m * mag) - target_count) <
        std::abs((hi - lo) / step - target_count)) {
      step = m * mag;
    }
  }
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

ChartModel BuildChartModel(const std::vector<Experiment>& experiments,
                           const ChartOptions& options) {
  ChartModel model;
  model.options = options;
  int last_id = 0;
  for (const Experiment& exp : experiments) {
    bool decided = exp.phase >= Phase::kDecided || exp.status != Status::kNone;
    if (!decided) continue;
    last_id = std::max(last_id, exp.id);
    if (HasChartValue(exp)) {
      ChartMark mark;
      mark.id = exp.id;
      mark.value = *exp.metric;
      mark.kept = exp.status == Status::kKeep || exp.baseline;
      mark.status = exp.baseline ? "baseline" : StatusName(exp.status);
      mark.description = exp.description;
      if (mark.kept) {
        model.best.emplace_back(exp.id, mark.value);
      }
      model.marks.push_back(std::move(mark));
    } else {
      model.failures.push_back({exp.id, StatusName(exp.status), exp.description});
    }
  }
  model.x_min = 1;
  model.x_max = std::max(last_id, 2);

  // The y range: everything kept and the target, widened to the middle 90%
  // of the other values; a diverged run far outside must not flatten the rest.
  std::vector<double> all, core;
  for (const ChartMark& m : model.marks) {
    all.push_back(m.value);
    if (m.kept) core.push_back(m.value);
  }
  if (options.target) core.push_back(*options.target);
  if (all.empty()) {
    double t = options.target.value_or(0.5);
    model.y_lo = t - 0.5;
    model.y_hi = t + 0.5;
    return model;
  }
  std::sort(all.begin(), all.end());
  core.push_back(all[static_cast<size_t>(0.05 * (all.size() - 1))]);
  core.push_back(all[static_cast<size_t>(0.95 * (all.size() - 1))]);
  double lo = *std::min_element(core.begin(), core.end());
  double hi = *std::max_element(core.begin(), core.end());
  double span = hi - lo;
  if (span <= 0) span = std::max(std::abs(hi) * 0.1, 1e-9);
  lo = std::max(lo - 0.5 * span, std::min(all.front(), lo));
  hi = std::min(hi + 0.5 * span, std::max(all.back(), hi));
  if (hi - lo <= 0) {
    lo -= span * 0.5;
    hi += span * 0.5;
  }
  double pad = (hi - lo) * 0.06;
  model.y_lo = lo - pad;
  model.y_hi = hi + pad;
  for (ChartMark& m : model.marks) m.clipped = m.value < model.y_lo || m.value > model.y_hi;
  return model;
}

void DrawChart(const ChartModel& model, double width, double height, Painter* p) {
  const double left = 72, right = 20, top = 40, bottom = 70;
  const double px0 = left, px1 = width - right, py0 = top, py1 = height - bottom;
  const double band_y = py1 + 22;  // the crash band, under the x axis
  auto X = [&](double id) {
    return px0 + (id - model.x_min) / std::max(1, model.x_max - model.x_min) * (px1 - px0);
  };
  auto Y = [&](double v) {
    v = std::clamp(v, model.y_lo, model.y_hi);
    return py1 - (v - model.y_lo) / (model.y_hi - model.y_lo) * (py1 - py0);
  };

  p->Rect(0, 0, width, height, 0xffffff, Stroke{kNone, 0});
  std::string title = model.options.title.empty()
                          ? model.options.metric_name + " by experiment (" +
                                (model.options.minimize ? "lower" : "higher") + " is better)"
                          : model.options.title;
  p->Text(px0, 24, title, TextStyle{15, 0x222222, TextStyle::Anchor::kStart, true}, "title");

  // Grid and axes.
  p->BeginGroup("axes");
  const std::vector<double> yticks = NiceTicks(model.y_lo, model.y_hi, 6);
  const double ystep = yticks.size() > 1 ? yticks[1] - yticks[0] : 1;
  for (double t : yticks) {
    p->Polyline({{px0, Y(t)}, {px1, Y(t)}}, Stroke{kGridColor, 1});
    p->Text(px0 - 8, Y(t) + 4, FormatTick(t, ystep),
            TextStyle{11, kAxisColor, TextStyle::Anchor::kEnd}, "ytick");
  }
  for (double t : NiceTicks(model.x_min, model.x_max, 10)) {
    if (t != std::floor(t)) continue;
    p->Polyline({{X(t), py1}, {X(t), py1 + 5}}, Stroke{kAxisColor, 1});
    p->Text(X(t), py1 + 44, std::to_string(static_cast<int>(t)),
            TextStyle{11, kAxisColor, TextStyle::Anchor::kMiddle}, "xtick");
  }
  p->Polyline({{px0, py0}, {px0, py1}, {px1, py1}}, Stroke{kAxisColor, 1});
  p->Text((px0 + px1) / 2, height - 4, "experiment",
          TextStyle{12, kAxisColor, TextStyle::Anchor::kMiddle}, "xlabel");
  p->Text(8, band_y + 4, "failed", TextStyle{11, kFailColor}, "bandlabel");
  p->EndGroup();

  if (model.options.target) {
    double y = Y(*model.options.target);
    p->BeginGroup("target");
    p->Polyline({{px0, y}, {px1, y}}, Stroke{kTargetColor, 1.5, true});
    p->Text(px1 - 4, y - 5, "target", TextStyle{11, kTargetColor, TextStyle::Anchor::kEnd},
            "targetlabel");
    p->EndGroup();
  }

  // The running best: a step line from each keep to the next, then to the end.
  if (!model.best.empty()) {
    std::vector<Point2> steps;
    for (size_t i = 0; i < model.best.size(); ++i) {
      double y = Y(model.best[i].second);
      if (i > 0) steps.push_back({X(model.best[i].first), Y(model.best[i - 1].second)});
      steps.push_back({X(model.best[i].first), y});
    }
    steps.push_back({X(model.x_max), Y(model.best.back().second)});
    p->BeginGroup("best");
    p->Polyline(steps, Stroke{kBestColor, 2});
    p->EndGroup();
  }

  p->BeginGroup("points");
  for (const ChartMark& m : model.marks) {
    if (m.kept) continue;
    p->Circle(X(m.id), Y(m.value), m.clipped ? 2 : 3, kOtherColor, Stroke{kNone, 0},
              m.clipped ? "point clipped" : "point",
              MarkTitle(m.id, m.status, m.description, &m.value));
  }
  p->EndGroup();
  p->BeginGroup("failures");
  for (const ChartFailure& f : model.failures) {
    p->Cross(X(f.id), band_y, 3.5, Stroke{kFailColor, 1.6}, "crash",
             MarkTitle(f.id, f.status, f.description, nullptr));
  }
  p->EndGroup();
  p->BeginGroup("kept");
  for (const ChartMark& m : model.marks) {
    if (!m.kept) continue;
    p->Circle(X(m.id), Y(m.value), 5, kKeptColor, Stroke{0xffffff, 1.5}, "kept",
              MarkTitle(m.id, m.status, m.description, &m.value));
  }
  p->EndGroup();

  // Labels of kept experiments, placed greedily (latest first: the most
  // recent improvements matter most) where they overlap nothing drawn yet.
  std::vector<Box> taken;
  for (const ChartMark& m : model.marks) {
    if (m.kept) taken.push_back({X(m.id) - 5, Y(m.value) - 5, X(m.id) + 5, Y(m.value) + 5});
  }
  const Box plot_box{px0, py0, px1 + 1, py1};
  p->BeginGroup("labels");
  int tries = 0, placed = 0;
  for (auto it = model.marks.rbegin(); it != model.marks.rend(); ++it) {
    const ChartMark& m = *it;
    if (!m.kept || m.description.empty()) continue;
    if (++tries > kLabelTries || placed >= kMaxLabels) break;
    std::string text = Truncate(m.description, kLabelChars);
    const double size = 11, w = EstimateTextWidth(text, size), h = size + 2;
    const double x = X(m.id), y = Y(m.value);
    struct Spot {
      double dx, dy;
      TextStyle::Anchor anchor;
    };
    const Spot spots[] = {{8, -8, TextStyle::Anchor::kStart},  {8, 16, TextStyle::Anchor::kStart},
                          {-8, -8, TextStyle::Anchor::kEnd},   {-8, 16, TextStyle::Anchor::kEnd},
                          {8, -22, TextStyle::Anchor::kStart}, {-8, 30, TextStyle::Anchor::kEnd}};
    for (const Spot& s : spots) {
      double x0 = s.anchor == TextStyle::Anchor::kStart ? x + s.dx : x + s.dx - w;
      Box box{x0, y + s.dy - size, x0 + w, y + s.dy - size + h};
      bool inside = box.x0 >= plot_box.x0 && box.x1 <= plot_box.x1 && box.y0 >= plot_box.y0 &&
                    box.y1 <= plot_box.y1;
      if (!inside ||
          std::any_of(taken.begin(), taken.end(), [&](const Box& b) { return b.Overlaps(box); })) {
        continue;
      }
      taken.push_back(box);
      ++placed;
      p->Text(x + s.dx, y + s.dy, text, TextStyle{size, kBestColor, s.anchor}, "label");
      break;
    }
  }
  p->EndGroup();

  // Legend, top right.
  double lx = px1 - 330, ly = 22;
  p->BeginGroup("legend");
  p->Circle(lx, ly - 4, 5, kKeptColor, Stroke{0xffffff, 1.5}, "legend-kept", "");
  p->Text(lx + 9, ly, "kept", TextStyle{11, kAxisColor}, "legend");
  p->Circle(lx + 58, ly - 4, 3, kOtherColor, Stroke{kNone, 0}, "legend-point", "");
  p->Text(lx + 66, ly, "discarded", TextStyle{11, kAxisColor}, "legend");
  p->Cross(lx + 140, ly - 4, 3.5, Stroke{kFailColor, 1.6}, "legend-crash", "");
  p->Text(lx + 148, ly, "failed", TextStyle{11, kAxisColor}, "legend");
  p->Polyline({{lx + 200, ly - 4}, {lx + 222, ly - 4}}, Stroke{kBestColor, 2});
  p->Text(lx + 226, ly, "best", TextStyle{11, kAxisColor}, "legend");
  if (model.options.target) {
    p->Polyline({{lx + 266, ly - 4}, {lx + 288, ly - 4}}, Stroke{kTargetColor, 1.5, true});
    p->Text(lx + 292, ly, "target", TextStyle{11, kAxisColor}, "legend");
  }
  p->EndGroup();
}

}  // namespace ratchet
