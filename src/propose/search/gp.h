// Gaussian-process regression for the search: a Matern 5/2 kernel over
// inputs in [0, 1] with one length scale per input, where a categorical input
// contributes a Hamming distance (1 when the categories differ) scaled by its
// own length scale. Hyperparameters (length scales, signal and noise
// variance) are the maximum a posteriori estimate under weak log-normal
// priors, found by gradient ascent from a fixed start (deterministic).
#pragma once

#include <string>
#include <vector>

namespace ratchet {

class GaussianProcess {
 public:
  /// Fits to rows `x` (all of the same width) and targets `y` (standardised
  /// by the caller). `categorical[d]` marks categorical inputs. False when
  /// the data cannot be fitted (fewer than two rows, a numerical failure).
  bool Fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
           const std::vector<bool>& categorical);

  /// Adds rows `x` with targets `y` and refactors with the hyperparameters
  /// already fitted (no new fit), e.g. lies for points still being evaluated.
  /// False on a numerical failure (the model is then unusable).
  bool Condition(const std::vector<std::vector<double>>& x, const std::vector<double>& y);

  /// Posterior mean and variance of the latent function at `x`.
  void Predict(const std::vector<double>& x, double* mean, double* var) const;

  /// The kernel's correlation between two inputs, in [0, 1] (signal
  /// variance divided out), with the fitted length scales.
  double Correlation(const std::vector<double>& a, const std::vector<double>& b) const;

  const std::vector<double>& length_scales() const { return length_; }
  double noise_variance() const { return noise_; }
  double signal_variance() const { return signal_; }

 private:
  double SquaredDistance(const std::vector<double>& a, const std::vector<double>& b) const;
  // Cholesky factor of K and alpha = K^-1 y for the current hyperparameters.
  bool Factor();

  std::vector<std::vector<double>> x_;
  std::vector<double> y_;
  std::vector<bool> categorical_;
  std::vector<double> length_;
  double signal_ = 1, noise_ = 1e-2;
  std::vector<double> chol_;   // lower triangle, row-major n x n
  std::vector<double> alpha_;  // K^-1 y
};

}  // namespace ratchet
