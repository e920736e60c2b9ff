// gradcheck: builds train.cpp's model at a tiny size, with every parameter
// randomised, and compares the gradients of ForwardBackward with central
// finite differences of a cross-entropy this program computes itself from
// the model's logits. Also checks that the model's own training loss is that
// cross-entropy, and runs the evaluator's causality probe on the tiny model.
// Exits 1 on a mismatch: the gate a loop runs before spending a budget on an
// edited model.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#define GPT_NO_MAIN
#ifdef GPT_TRAIN_FILE
#include GPT_TRAIN_FILE
#else
#include "../train.cpp"
#endif

namespace {

constexpr int kBatch = 3;
constexpr int kContext = 192;  // three attention blocks of 64
constexpr double kEpsilon = 1e-2;  // step of the central differences
constexpr double kRelTol = 3e-2;   // allowed relative disagreement
constexpr double kAbsTol = 2e-5;   // below this both sides count as equal
constexpr int kDirections = 3;     // random directions per tensor
constexpr int kEntries = 4;        // single entries per tensor (largest gradients)

struct Batch {
  std::vector<uint8_t> inputs, targets;
};

// The reference loss: mean cross-entropy of the logits, in double.
double ReferenceLoss(gpt::Model& model, const Batch& batch) {
  std::vector<float> logits(static_cast<size_t>(kBatch) * kContext * gpt::kVocab);
  model.Logits(batch.inputs.data(), kBatch, kContext, logits.data());
  double total = 0;
  for (int n = 0; n < kBatch * kContext; ++n) {
    const float* row = &logits[static_cast<size_t>(n) * gpt::kVocab];
    double max = row[0];
    for (int v = 1; v < gpt::kVocab; ++v) max = std::max(max, static_cast<double>(row[v]));
    double sum = 0;
    for (int v = 0; v < gpt::kVocab; ++v) sum += std::exp(row[v] - max);
    total += std::log(sum) + max - row[batch.targets[n]];
  }
  return total / (kBatch * kContext);
}

bool Close(double analytic, double numeric) {
  const double diff = std::fabs(analytic - numeric);
  return diff <= kAbsTol || diff <= kRelTol * std::max(std::fabs(analytic), std::fabs(numeric));
}

int Reject(const std::string& message) {
  std::printf("FAIL: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main() {
  const gpt::ModelSize tiny{2, 32, 2, kContext, kBatch};
  std::unique_ptr<gpt::Model> model = MakeModel(tiny, 1);
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Random parameters, so that no gradient is zero by construction (a
  // zero-initialised head would make every other gradient vanish).
  std::vector<gpt::ParamView> params = model->Params();
  for (gpt::ParamView& p : params) {
    const float std = p.rows == 1 ? 0.3f : 1.0f / std::sqrt(static_cast<float>(p.cols));
    for (size_t i = 0; i < p.size(); ++i) {
      p.value[i] = (p.rows == 1 ? 1.0f : 0.0f) + std * normal(rng);
    }
  }
  Batch batch;
  for (int i = 0; i < kBatch * kContext; ++i) {
    batch.inputs.push_back(static_cast<uint8_t>(rng()));
    batch.targets.push_back(static_cast<uint8_t>(rng()));
  }

  const double own =
      model->ForwardBackward(batch.inputs.data(), batch.targets.data(), kBatch, kContext);
  const double reference = ReferenceLoss(*model, batch);
  if (!(std::fabs(own - reference) <= 1e-4 * std::max(1.0, reference))) {
    return Reject("ForwardBackward returns loss " + std::to_string(own) +
                  ", the cross-entropy of its logits is " + std::to_string(reference));
  }
  std::printf("loss %.6f (model) %.6f (reference)\n", own, reference);
  std::string err;
  if (!gpt::CheckCausality(*model, batch.inputs.data(), kBatch, kContext, 11, &err)) {
    return Reject(err);
  }
  std::printf("causality probe passed\n");

  // The gradients, copied before the finite differences overwrite them.
  std::vector<std::vector<double>> grads;
  for (const gpt::ParamView& p : params) {
    grads.emplace_back(p.grad, p.grad + p.size());
    for (double g : grads.back()) {
      if (!std::isfinite(g)) return Reject("non-finite gradient in " + p.name);
    }
  }

  int failures = 0;
  for (size_t pi = 0; pi < params.size(); ++pi) {
    gpt::ParamView& p = params[pi];
    const std::vector<double>& g = grads[pi];
    const int failures_before = failures;
    double worst = 0;
    // Directional derivatives along random unit vectors cover every entry.
    auto check = [&](const std::vector<double>& dir, const std::string& what) {
      double analytic = 0;
      for (size_t i = 0; i < p.size(); ++i) analytic += g[i] * dir[i];
      std::vector<float> saved(p.value, p.value + p.size());
      for (size_t i = 0; i < p.size(); ++i) p.value[i] = saved[i] + kEpsilon * dir[i];
      const double up = ReferenceLoss(*model, batch);
      for (size_t i = 0; i < p.size(); ++i) p.value[i] = saved[i] - kEpsilon * dir[i];
      const double down = ReferenceLoss(*model, batch);
      std::copy(saved.begin(), saved.end(), p.value);
      const double numeric = (up - down) / (2 * kEpsilon);
      const double scale = std::max(std::fabs(analytic), std::fabs(numeric));
      if (scale > kAbsTol) worst = std::max(worst, std::fabs(analytic - numeric) / scale);
      if (!Close(analytic, numeric)) {
        std::printf("FAIL: %s, %s: analytic %.6g, finite differences %.6g\n", p.name.c_str(),
                    what.c_str(), analytic, numeric);
        ++failures;
      }
    };
    for (int d = 0; d < kDirections; ++d) {
      std::vector<double> dir(p.size());
      double norm = 0;
      for (double& x : dir) {
        x = normal(rng);
        norm += x * x;
      }
      for (double& x : dir) x /= std::sqrt(norm);
      check(dir, "random direction " + std::to_string(d));
    }
    std::vector<size_t> order(p.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t k = std::min<size_t>(kEntries, order.size());
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    for (size_t e = 0; e < k; ++e) {
      std::vector<double> dir(p.size(), 0.0);
      dir[order[e]] = 1.0;
      check(dir, "entry " + std::to_string(order[e]));
    }
    std::printf("%-4s %-18s %6zu values, worst relative error %.2e\n",
                failures > failures_before ? "" : "ok", p.name.c_str(), p.size(), worst);
  }
  if (failures > 0) {
    std::printf("FAIL: %d gradient checks disagree with finite differences\n", failures);
    return 1;
  }
  std::printf("gradcheck: all %zu parameter tensors match finite differences\n", params.size());
  return 0;
}
