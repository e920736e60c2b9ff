#include "functions.h"

#include <cmath>

namespace ratchet::bench {

namespace {

ParamSpec Float(const std::string& name, double low, double high, bool log = false) {
  ParamSpec p;
  p.name = name;
  p.type = ParamSpec::Type::kFloat;
  p.low = low;
  p.high = high;
  p.log = log;
  return p;
}

ParamSpec Int(const std::string& name, double low, double high) {
  ParamSpec p = Float(name, low, high);
  p.type = ParamSpec::Type::kInt;
  return p;
}

ParamSpec Choice(const std::string& name, int n) {
  ParamSpec p = Float(name, 0, 1);
  p.type = ParamSpec::Type::kChoice;
  for (int k = 0; k < n; ++k) p.choices.push_back(Literal::Number(k, std::to_string(k)));
  return p;
}

double Branin(const Point& x) {
  const double a = 1, b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, r = 6, s = 10, t = 1 / (8 * M_PI);
  const double u = x[1] - b * x[0] * x[0] + c * x[0] - r;
  return a * u * u + s * (1 - t) * std::cos(x[0]) + s;
}

double Hartmann6(const Point& x) {
  static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
  static const double A[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                 {0.05, 10, 17, 0.1, 8, 14},
                                 {3, 3.5, 1.7, 10, 17, 8},
                                 {17, 8, 0.05, 10, 0.1, 14}};
  static const double P[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                 {2329, 4135, 8307, 3736, 1004, 9991},
                                 {2348, 1451, 3522, 2883, 3047, 6650},
                                 {4047, 8828, 8732, 5743, 1091, 381}};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      const double d = x[j] - P[i][j] * 1e-4;
      inner += A[i][j] * d * d;
    }
    sum += alpha[i] * std::exp(-inner);
  }
  return -sum;
}

double Rosenbrock(const Point& x) {
  double sum = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    sum += 100 * a * a + b * b;
  }
  return sum;
}

double Ackley(const Point& x) {
  const double n = static_cast<double>(x.size());
  double sq = 0, cs = 0;
  for (double v : x) {
    sq += v * v;
    cs += std::cos(2 * M_PI * v);
  }
  return -20 * std::exp(-0.2 * std::sqrt(sq / n)) - std::exp(cs / n) + 20 + M_E;
}

// The three 2-d parts of Func2C (Ru et al. 2020, CoCaBO), on x in [-2, 2]^2.
double Func2CPart(int which, double x1, double x2) {
  if (which == 0) return (100 * (x2 - x1 * x1) * (x2 - x1 * x1) + (x1 - 1) * (x1 - 1)) / 300;
  if (which == 1) {
    return ((4 - 2.1 * x1 * x1 + x1 * x1 * x1 * x1 / 3) * x1 * x1 + x1 * x2 +
            (-4 + 4 * x2 * x2) * x2 * x2) /
           10;
  }
  const double a = 1.5 - x1 + x1 * x2, b = 2.25 - x1 + x1 * x2 * x2,
               c = 2.625 - x1 + x1 * x2 * x2 * x2;
  return (a * a + b * b + c * c) / 50;
}

double Func2C(const Point& x) {
  // x = [h1 (3 values), h2 (5 values), x1, x2]; the second choice maps 3, 4 to Beale.
  const double x1 = 2 * x[2], x2 = 2 * x[3];
  const int h1 = static_cast<int>(x[0]), h2 = std::min(static_cast<int>(x[1]), 2);
  return Func2CPart(h1, x1, x2) + Func2CPart(h2, x1, x2);
}

// Pressure-vessel design (Sandgren 1990): shell and head thickness are
// multiples of 0.0625 in; an infeasible design is a failed evaluation.
std::optional<double> PressureVessel(const Point& x) {
  const double ts = 0.0625 * x[0], th = 0.0625 * x[1], r = x[2], l = x[3];
  if (-ts + 0.0193 * r > 0 || -th + 0.00954 * r > 0 ||
      -M_PI * r * r * l - 4.0 / 3.0 * M_PI * r * r * r + 1296000 > 0 || l > 240) {
    return std::nullopt;
  }
  return 0.6224 * ts * r * l + 1.7781 * th * r * r + 3.1661 * ts * ts * l + 19.84 * ts * ts * r;
}

}  // namespace

std::vector<TestFunction> TestFunctions() {
  std::vector<TestFunction> fs;
  fs.push_back(
      {"branin", "2 float", {Float("x1", -5, 10), Float("x2", 0, 15)}, 0.397887, 0.1, Branin});
  std::vector<ParamSpec> h6;
  for (int i = 0; i < 6; ++i) h6.push_back(Float("x" + std::to_string(i + 1), 0, 1));
  fs.push_back({"hartmann6", "6 float", h6, -3.32237, 0.05, Hartmann6});
  std::vector<ParamSpec> r4;
  for (int i = 0; i < 4; ++i) r4.push_back(Int("n" + std::to_string(i + 1), -5, 10));
  fs.push_back({"rosenbrock4-int", "4 int", r4, 0, 1.0, Rosenbrock});
  std::vector<ParamSpec> ack;
  for (int i = 0; i < 5; ++i) ack.push_back(Float("x" + std::to_string(i + 1), -5, 10));
  for (int i = 0; i < 5; ++i) ack.push_back(Int("n" + std::to_string(i + 1), -5, 10));
  fs.push_back({"ackley10-mixed", "5 float + 5 int", ack, 0, 0.1, Ackley});
  fs.push_back({"func2c",
                "2 choice + 2 float",
                {Choice("h1", 3), Choice("h2", 5), Float("x1", -1, 1), Float("x2", -1, 1)},
                -0.2063256,
                0.01,
                Func2C});
  fs.push_back({"pressure-vessel",
                "2 int + 2 log-float, infeasible = failure",
                {Int("n_shell", 1, 99), Int("n_head", 1, 99), Float("radius", 10, 200, true),
                 Float("length", 10, 200, true)},
                6059.714335,
                20.0,
                PressureVessel});
  return fs;
}

}  // namespace ratchet::bench
