#include "propose/search/gp.h"

#include <algorithm>
#include <cmath>

namespace ratchet {

namespace {

const double kSqrt5 = std::sqrt(5.0);

// Matern 5/2 correlation at distance r.
double Matern(double r) { return (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r); }

// In-place Cholesky of the n x n row-major matrix a (lower triangle kept).
bool Cholesky(std::vector<double>* a, size_t n) {
  std::vector<double>& m = *a;
  for (size_t j = 0; j < n; ++j) {
    double d = m[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= m[j * n + k] * m[j * n + k];
    if (!(d > 0) || !std::isfinite(d)) return false;
    d = std::sqrt(d);
    m[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double s = m[i * n + j];
      for (size_t k = 0; k < j; ++k) s -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = s / d;
    }
    for (size_t k = j + 1; k < n; ++k) m[j * n + k] = 0;
  }
  return true;
}

// Solves L z = b in place (L lower triangular).
void ForwardSolve(const std::vector<double>& l, size_t n, std::vector<double>* b) {
  for (size_t i = 0; i < n; ++i) {
    double s = (*b)[i];
    for (size_t k = 0; k < i; ++k) s -= l[i * n + k] * (*b)[k];
    (*b)[i] = s / l[i * n + i];
  }
}

// Solves L^T z = b in place.
void BackwardSolve(const std::vector<double>& l, size_t n, std::vector<double>* b) {
  for (size_t ii = n; ii-- > 0;) {
    double s = (*b)[ii];
    for (size_t k = ii + 1; k < n; ++k) s -= l[k * n + ii] * (*b)[k];
    (*b)[ii] = s / l[ii * n + ii];
  }
}

// Weak priors (log-normal) on the hyperparameters; inputs are in [0, 1] and
// targets standardised, so these scales are the same for every problem.
struct Prior {
  double mean, sd;
  double LogDensity(double v) const { return -0.5 * (v - mean) * (v - mean) / (sd * sd); }
  double Gradient(double v) const { return -(v - mean) / (sd * sd); }
};
const Prior kNumericLength{std::log(0.5), 1.0};
const Prior kCategoricalLength{std::log(1.0), 1.0};
const Prior kSignal{0.0, 1.5};
const Prior kNoise{std::log(1e-2), 2.5};
constexpr double kMinLength = 0.01, kMaxLength = 30;
constexpr double kMinNoise = 1e-6, kMaxNoise = 2;

}  // namespace

double GaussianProcess::SquaredDistance(const std::vector<double>& a,
                                        const std::vector<double>& b) const {
  double r2 = 0;
  for (size_t d = 0; d < a.size(); ++d) {
    const double delta = categorical_[d] ? (a[d] != b[d] ? 1.0 : 0.0) : a[d] - b[d];
    r2 += delta * delta / (length_[d] * length_[d]);
  }
  return r2;
}

double GaussianProcess::Correlation(const std::vector<double>& a,
                                    const std::vector<double>& b) const {
  return Matern(std::sqrt(SquaredDistance(a, b)));
}

bool GaussianProcess::Factor() {
  const size_t n = x_.size();
  chol_.assign(n * n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      const double k = signal_ * Correlation(x_[i], x_[j]);
      chol_[i * n + j] = k;
      chol_[j * n + i] = k;
    }
    chol_[i * n + i] += noise_ + 1e-9;
  }
  if (!Cholesky(&chol_, n)) return false;
  alpha_ = y_;
  ForwardSolve(chol_, n, &alpha_);
  BackwardSolve(chol_, n, &alpha_);
  return true;
}

bool GaussianProcess::Fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                          const std::vector<bool>& categorical) {
  x_ = x;
  y_ = y;
  categorical_ = categorical;
  const size_t n = x.size();
  if (n < 2) return false;
  const size_t dims = categorical.size();
  // theta = [log length (dims), log signal, log noise]
  std::vector<double> theta(dims + 2);
  for (size_t d = 0; d < dims; ++d) {
    theta[d] = categorical[d] ? kCategoricalLength.mean : kNumericLength.mean;
  }
  theta[dims] = kSignal.mean;
  theta[dims + 1] = kNoise.mean;

  auto apply = [&](const std::vector<double>& t) {
    length_.resize(dims);
    for (size_t d = 0; d < dims; ++d) length_[d] = std::exp(t[d]);
    signal_ = std::exp(t[dims]);
    noise_ = std::exp(t[dims + 1]);
  };

  // Per pair and input: the squared difference (reused by every step).
  std::vector<double> delta2(n * n * dims);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      for (size_t d = 0; d < dims; ++d) {
        const double delta = categorical[d] ? (x[a][d] != x[b][d] ? 1.0 : 0.0) : x[a][d] - x[b][d];
        delta2[(a * n + b) * dims + d] = delta * delta;
      }
    }
  }

  std::vector<double> m(theta.size(), 0), v(theta.size(), 0), grad(theta.size());
  std::vector<double> best_theta = theta;
  double best_objective = -INFINITY;
  const int kSteps = 60;
  const double kRate = 0.08;
  std::vector<double> kinv(n * n), column(n);
  for (int step = 0; step <= kSteps; ++step) {
    apply(theta);
    if (!Factor()) {
      // Too little noise for the data: raise it and try again.
      theta[dims + 1] = std::min(std::log(kMaxNoise), theta[dims + 1] + 1.0);
      continue;
    }
    double objective = 0;
    for (size_t i = 0; i < n; ++i)
      objective -= 0.5 * y_[i] * alpha_[i] + std::log(chol_[i * n + i]);
    for (size_t d = 0; d < dims; ++d) {
      objective += (categorical[d] ? kCategoricalLength : kNumericLength).LogDensity(theta[d]);
    }
    objective += kSignal.LogDensity(theta[dims]) + kNoise.LogDensity(theta[dims + 1]);
    if (objective > best_objective) {
      best_objective = objective;
      best_theta = theta;
    }
    if (step == kSteps) break;
    // K^-1 column by column (n solves).
    for (size_t j = 0; j < n; ++j) {
      std::fill(column.begin(), column.end(), 0.0);
      column[j] = 1;
      ForwardSolve(chol_, n, &column);
      BackwardSolve(chol_, n, &column);
      for (size_t i = 0; i < n; ++i) kinv[i * n + j] = column[i];
    }
    std::fill(grad.begin(), grad.end(), 0.0);
    double trace_w = 0;
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) {
        const double w = alpha_[a] * alpha_[b] - kinv[a * n + b];
        if (a == b) trace_w += w;
        const double* d2 = &delta2[(a * n + b) * dims];
        double r2 = 0;
        for (size_t d = 0; d < dims; ++d) r2 += d2[d] / (length_[d] * length_[d]);
        const double r = std::sqrt(r2);
        const double e = std::exp(-kSqrt5 * r);
        grad[dims] += 0.5 * w * signal_ * (1 + kSqrt5 * r + 5.0 / 3.0 * r2) * e;
        const double g = 0.5 * w * signal_ * 5.0 / 3.0 * (1 + kSqrt5 * r) * e;
        for (size_t d = 0; d < dims; ++d) grad[d] += g * d2[d] / (length_[d] * length_[d]);
      }
    }
    grad[dims + 1] = 0.5 * noise_ * trace_w;
    for (size_t d = 0; d < dims; ++d) {
      grad[d] += (categorical[d] ? kCategoricalLength : kNumericLength).Gradient(theta[d]);
    }
    grad[dims] += kSignal.Gradient(theta[dims]);
    grad[dims + 1] += kNoise.Gradient(theta[dims + 1]);
    // Adam ascent.
    for (size_t k = 0; k < theta.size(); ++k) {
      m[k] = 0.9 * m[k] + 0.1 * grad[k];
      v[k] = 0.999 * v[k] + 0.001 * grad[k] * grad[k];
      const double mh = m[k] / (1 - std::pow(0.9, step + 1));
      const double vh = v[k] / (1 - std::pow(0.999, step + 1));
      theta[k] += kRate * mh / (std::sqrt(vh) + 1e-8);
    }
    for (size_t d = 0; d < dims; ++d) {
      theta[d] = std::clamp(theta[d], std::log(kMinLength), std::log(kMaxLength));
    }
    theta[dims] = std::clamp(theta[dims], std::log(1e-3), std::log(1e3));
    theta[dims + 1] = std::clamp(theta[dims + 1], std::log(kMinNoise), std::log(kMaxNoise));
  }
  if (!std::isfinite(best_objective)) return false;
  apply(best_theta);
  return Factor();
}

bool GaussianProcess::Condition(const std::vector<std::vector<double>>& x,
                                const std::vector<double>& y) {
  x_.insert(x_.end(), x.begin(), x.end());
  y_.insert(y_.end(), y.begin(), y.end());
  return Factor();
}

void GaussianProcess::Predict(const std::vector<double>& x, double* mean, double* var) const {
  const size_t n = x_.size();
  std::vector<double> k(n);
  double mu = 0;
  for (size_t i = 0; i < n; ++i) {
    k[i] = signal_ * Correlation(x, x_[i]);
    mu += k[i] * alpha_[i];
  }
  ForwardSolve(chol_, n, &k);
  double s = signal_;
  for (size_t i = 0; i < n; ++i) s -= k[i] * k[i];
  *mean = mu;
  *var = std::max(s, 1e-12);
}

}  // namespace ratchet
