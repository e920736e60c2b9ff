// trusted/gradcheck: the gate a loop runs before spending a budget on an
// edited model. Built from prepare/ alone; the model is train.cpp's, behind
// `build/serve --gradcheck` on fds 3 and 4. This side decides everything:
// it has the server make the model at a tiny size, sets every parameter to
// random values it draws, and compares the server's gradients with central
// finite differences of a cross-entropy it computes itself from the
// server's logits at parameters it chooses. It also checks that the model's
// own training loss is that cross-entropy, and runs the causality probe on
// the tiny model. Exits 1 on a mismatch, with "FAIL: <reason>".
//   trusted/gradcheck       By hand: prepare/with-server 'build/serve --gradcheck'
//   trusted/gradcheck
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "evaluator.h"
#include "protocol.h"
#include "run_env.h"
#include "serve_client.h"

namespace {

constexpr int kBatch = 3;
constexpr int kContext = 192;      // three attention blocks of 64
constexpr double kEpsilon = 1e-2;  // step of the central differences
constexpr double kRelTol = 3e-2;   // allowed relative disagreement
constexpr double kAbsTol = 2e-5;   // below this both sides count as equal
constexpr int kDirections = 3;     // random directions per tensor
constexpr int kEntries = 4;        // single entries per tensor (largest gradients)

int Reject(const std::string& message) {
  std::printf("FAIL: %s\n", message.c_str());
  std::fflush(stdout);
  return 1;
}

bool Close(double analytic, double numeric) {
  const double diff = std::fabs(analytic - numeric);
  return diff <= kAbsTol || diff <= kRelTol * std::max(std::fabs(analytic), std::fabs(numeric));
}

class Check {
 public:
  explicit Check(gpt::ServeClient& server) : server_(server) {}

  // The reference loss: mean cross-entropy of the server's logits, in double.
  bool ReferenceLoss(double* loss, std::string* err) {
    std::vector<float> logits;
    if (!server_.Logits(inputs.data(), kBatch, kContext, &logits, err)) return false;
    double total = 0;
    for (int n = 0; n < kBatch * kContext; ++n) {
      const float* row = &logits[static_cast<size_t>(n) * gpt::kVocab];
      double max = row[0];
      for (int v = 1; v < gpt::kVocab; ++v) max = std::max(max, static_cast<double>(row[v]));
      double sum = 0;
      for (int v = 0; v < gpt::kVocab; ++v) sum += std::exp(row[v] - max);
      total += std::log(sum) + max - row[targets[n]];
    }
    *loss = total / (kBatch * kContext);
    return true;
  }

  std::vector<uint8_t> inputs, targets;

 private:
  gpt::ServeClient& server_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: %s  (build/serve --gradcheck on fds 3 and 4: prepare/with-server)\n",
                 argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  std::string err;
  gpt::VerifyEnv env;
  if (!gpt::ReadVerifyEnv(&env, &err)) return Reject(err);
  gpt::ServeClient server(env.write_fd, env.read_fd, "the model server");

  const gpt::ModelSize tiny{2, 32, 2, kContext, kBatch};
  gpt::ModelInfo info;
  if (!server.Make(tiny, 1, &info, &err)) return Reject(err);
  if (info.max_batch < kBatch || info.max_context < kContext) {
    return Reject("the tiny model accepts only " + std::to_string(info.max_batch) + " x " +
                  std::to_string(info.max_context) + " tokens");
  }
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Random parameters, so that no gradient is zero by construction (a
  // zero-initialised head would make every other gradient vanish).
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < info.tensors.size(); ++i) {
    const gpt::TensorInfo& t = info.tensors[i];
    const float std = t.rows == 1 ? 0.3f : 1.0f / std::sqrt(static_cast<float>(t.cols));
    std::vector<float> v(t.size());
    for (float& x : v) x = (t.rows == 1 ? 1.0f : 0.0f) + std * normal(rng);
    if (!server.SetParam(static_cast<uint32_t>(i), v, &err)) return Reject(err);
    values.push_back(std::move(v));
  }
  Check check(server);
  for (int i = 0; i < kBatch * kContext; ++i) {
    check.inputs.push_back(static_cast<uint8_t>(rng()));
    check.targets.push_back(static_cast<uint8_t>(rng()));
  }

  double own = 0, reference = 0;
  std::vector<float> flat;
  if (!server.ForwardBackward(check.inputs.data(), check.targets.data(), kBatch, kContext,
                              info.TotalValues(), &own, &flat, &err) ||
      !check.ReferenceLoss(&reference, &err)) {
    return Reject(err);
  }
  if (!(std::fabs(own - reference) <= 1e-4 * std::max(1.0, reference))) {
    return Reject("ForwardBackward returns loss " + std::to_string(own) +
                  ", the cross-entropy of its logits is " + std::to_string(reference));
  }
  std::printf("loss %.6f (model) %.6f (reference)\n", own, reference);
  const gpt::LogitsFn logits = [&server](const uint8_t* tokens, int batch, int T,
                                         std::vector<float>* out, std::string* e) {
    return server.Logits(tokens, batch, T, out, e);
  };
  if (!gpt::CheckCausality(logits, check.inputs.data(), kBatch, kContext, 11, &err)) {
    return Reject(err);
  }
  std::printf("causality probe passed\n");
  for (float g : flat) {
    if (!std::isfinite(g)) return Reject("non-finite gradient");
  }

  int failures = 0;
  size_t offset = 0;
  for (size_t ti = 0; ti < info.tensors.size(); ++ti) {
    const gpt::TensorInfo& t = info.tensors[ti];
    const std::vector<float> g(flat.begin() + offset, flat.begin() + offset + t.size());
    offset += t.size();
    const std::vector<float>& saved = values[ti];
    const int failures_before = failures;
    double worst = 0;
    // Directional derivatives along random unit vectors cover every entry.
    auto probe = [&](const std::vector<double>& dir, const std::string& what) {
      double analytic = 0;
      for (size_t i = 0; i < t.size(); ++i) analytic += g[i] * dir[i];
      double loss[2];
      for (int side = 0; side < 2; ++side) {
        std::vector<float> moved(saved);
        const double step = side == 0 ? kEpsilon : -kEpsilon;
        for (size_t i = 0; i < t.size(); ++i) moved[i] = saved[i] + step * dir[i];
        if (!server.SetParam(static_cast<uint32_t>(ti), moved, &err) ||
            !check.ReferenceLoss(&loss[side], &err)) {
          return false;
        }
      }
      if (!server.SetParam(static_cast<uint32_t>(ti), saved, &err)) return false;
      const double numeric = (loss[0] - loss[1]) / (2 * kEpsilon);
      const double scale = std::max(std::fabs(analytic), std::fabs(numeric));
      if (scale > kAbsTol) worst = std::max(worst, std::fabs(analytic - numeric) / scale);
      if (!Close(analytic, numeric)) {
        std::printf("FAIL: %s, %s: analytic %.6g, finite differences %.6g\n", t.name.c_str(),
                    what.c_str(), analytic, numeric);
        ++failures;
      }
      return true;
    };
    for (int d = 0; d < kDirections; ++d) {
      std::vector<double> dir(t.size());
      double norm = 0;
      for (double& x : dir) {
        x = normal(rng);
        norm += x * x;
      }
      for (double& x : dir) x /= std::sqrt(norm);
      if (!probe(dir, "random direction " + std::to_string(d))) return Reject(err);
    }
    std::vector<size_t> order(t.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t k = std::min<size_t>(kEntries, order.size());
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](size_t a, size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    for (size_t e = 0; e < k; ++e) {
      std::vector<double> dir(t.size(), 0.0);
      dir[order[e]] = 1.0;
      if (!probe(dir, "entry " + std::to_string(order[e]))) return Reject(err);
    }
    std::printf("%-4s %-18s %6zu values, worst relative error %.2e\n",
                failures > failures_before ? "" : "ok", t.name.c_str(), t.size(), worst);
  }
  if (!server.Quit(&err)) return Reject(err);
  if (failures > 0) {
    std::printf("FAIL: %d gradient checks disagree with finite differences\n", failures);
    return 1;
  }
  std::printf("gradcheck: all %zu parameter tensors match finite differences\n",
              info.tensors.size());
  return 0;
}
