#include "evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <vector>

#include "manifest.h"
#include "protocol.h"

namespace gpt {
namespace {

// Captured when the program's static objects are built, i.e. at start-up.
const auto kProcessStart = std::chrono::steady_clock::now();

// Windows per Logits call: small enough for any model's batch, large enough
// to keep the matrix products efficient.
constexpr int kEvalBatch = 16;
constexpr int kProbes = 4;
constexpr double kProbeTolerance = 1e-4;

int EvalBatch(Model& model) { return std::max(1, std::min(kEvalBatch, model.max_batch())); }

bool CheckModelAccepts(Model& model, std::string* err) {
  if (model.max_context() < kEvalContext) {
    *err = "the model accepts sequences of at most " + std::to_string(model.max_context()) +
           " bytes; the evaluator needs " + std::to_string(kEvalContext);
    return false;
  }
  return true;
}

// Windows of kEvalContext + 1 bytes starting every kEvalContext bytes: the
// first kEvalContext bytes are the input, the last kEvalContext the targets.
size_t WindowCount(std::string_view bytes) {
  return bytes.size() < 2 ? 0 : (bytes.size() - 1) / kEvalContext;
}

const uint8_t* WindowAt(std::string_view bytes, size_t w) {
  return reinterpret_cast<const uint8_t*>(bytes.data()) + w * kEvalContext;
}

double PeakGflops(const std::string& data_dir) {
  if (const char* v = std::getenv("GPT_PEAK_GFLOPS")) return std::atof(v);
  std::ifstream in(data_dir + "/peak_gflops.txt");
  double g = 0;
  return (in >> g) ? g : 0;
}

}  // namespace

double ProcessSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

double PeakMemoryMb() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
  }
  return 0;
}

bool ScoreBitsPerByte(Model& model, std::string_view bytes, double* bpb, std::string* err) {
  if (!CheckModelAccepts(model, err)) return false;
  const size_t windows = WindowCount(bytes);
  if (windows == 0) {
    *err = "the split is shorter than one window of " + std::to_string(kEvalContext + 1) + " bytes";
    return false;
  }
  const int batch = EvalBatch(model);
  const int T = kEvalContext;
  std::vector<uint8_t> tokens(static_cast<size_t>(batch) * T);
  std::vector<float> logits(static_cast<size_t>(batch) * T * kVocab);
  double nats = 0;
  for (size_t first = 0; first < windows; first += batch) {
    const int b = static_cast<int>(std::min<size_t>(batch, windows - first));
    for (int i = 0; i < b; ++i) std::copy_n(WindowAt(bytes, first + i), T, &tokens[i * T]);
    model.Logits(tokens.data(), b, T, logits.data());
    // Log-softmax and cross-entropy here, in double, in a fixed order, so the
    // score does not depend on how the model computes its own loss.
    for (int i = 0; i < b; ++i) {
      const uint8_t* window = WindowAt(bytes, first + i);
      for (int t = 0; t < T; ++t) {
        const float* row = &logits[(static_cast<size_t>(i) * T + t) * kVocab];
        double max = row[0];
        for (int v = 1; v < kVocab; ++v) max = std::max(max, static_cast<double>(row[v]));
        double sum = 0;
        for (int v = 0; v < kVocab; ++v) sum += std::exp(row[v] - max);
        const double loss = std::log(sum) + max - row[window[t + 1]];
        if (!std::isfinite(loss)) {
          *err = "the model gave a non-finite logit (window " + std::to_string(first + i) +
                 ", position " + std::to_string(t) + ")";
          return false;
        }
        nats += loss;
      }
    }
  }
  *bpb = nats / std::log(2.0) / (static_cast<double>(windows) * T);
  return true;
}

bool CheckCausality(Model& model, const uint8_t* tokens, int batch, int T, uint64_t seed,
                    std::string* err) {
  if (batch < 1 || batch > model.max_batch() || T < 1 || T > model.max_context()) {
    *err = "causality probe: the model does not accept " + std::to_string(batch) + " x " +
           std::to_string(T) + " tokens";
    return false;
  }
  const size_t n = static_cast<size_t>(batch) * T * kVocab;
  std::vector<float> before(n), after(n);
  model.Logits(tokens, batch, T, before.data());
  std::mt19937_64 rng(seed);
  for (int probe = 0; probe < kProbes; ++probe) {
    const int w = static_cast<int>(rng() % batch);
    const int p = static_cast<int>(rng() % T);
    std::vector<uint8_t> changed(tokens, tokens + static_cast<size_t>(batch) * T);
    changed[static_cast<size_t>(w) * T + p] ^= static_cast<uint8_t>(1 + rng() % 255);
    model.Logits(changed.data(), batch, T, after.data());
    for (int i = 0; i < batch; ++i) {
      // In the changed sequence only positions >= p may move; elsewhere none.
      const int fixed = i == w ? p : T;
      for (int t = 0; t < fixed; ++t) {
        for (int v = 0; v < kVocab; ++v) {
          const size_t k = (static_cast<size_t>(i) * T + t) * kVocab + v;
          if (!(std::fabs(after[k] - before[k]) <= kProbeTolerance * (1 + std::fabs(before[k])))) {
            *err = "causality probe: changing byte " + std::to_string(p) + " of sequence " +
                   std::to_string(w) + " changed the logits at position " + std::to_string(t) +
                   " of sequence " + std::to_string(i) +
                   (i == w ? ": the model looks ahead at later bytes"
                           : ": the model mixes the sequences of a batch") +
                   " (" + std::to_string(before[k]) + " -> " + std::to_string(after[k]) + ")";
            return false;
          }
        }
      }
    }
  }
  return true;
}

namespace {

// The probe on up to 4 windows of the split, spread over it.
bool ProbeSplit(Model& model, std::string_view bytes, std::string* err) {
  if (!CheckModelAccepts(model, err)) return false;
  const size_t windows = WindowCount(bytes);
  const int batch = static_cast<int>(std::min<size_t>(std::min(EvalBatch(model), 4), windows));
  if (batch < 1) {
    *err = "the split is too small for the causality probe";
    return false;
  }
  std::vector<uint8_t> tokens(static_cast<size_t>(batch) * kEvalContext);
  for (int i = 0; i < batch; ++i) {
    std::copy_n(WindowAt(bytes, i * windows / batch), kEvalContext, &tokens[i * kEvalContext]);
  }
  return CheckCausality(model, tokens.data(), batch, kEvalContext, std::random_device{}(), err);
}

}  // namespace

int EvaluateAndReport(Model& model, const TrainReport& report, const std::string& data_dir,
                      const std::string& split) {
  std::string bytes, err;
  double bpb = 0;
  if (split != "val" && split != "audit") {
    err = "unknown split '" + split + "' (val or audit)";
  } else if (ReadVerified(data_dir, split + ".bin", &bytes, &err) &&
             ProbeSplit(model, bytes, &err) && ScoreBitsPerByte(model, bytes, &bpb, &err)) {
    err.clear();
  }
  if (!err.empty()) {
    std::printf("FAIL: %s\n", err.c_str());
    std::fflush(stdout);
    return 1;
  }
  const double peak = PeakGflops(data_dir);
  const double achieved =
      report.training_seconds > 0
          ? report.flops_per_token * report.total_tokens / report.training_seconds * 1e-9
          : 0;
  std::printf("---\n");
  std::printf("%-18s%.6f\n", (split + "_bpb:").c_str(), bpb);
  std::printf("%-18s%.1f\n", "training_seconds:", report.training_seconds);
  std::printf("%-18s%.1f\n", "total_seconds:", ProcessSeconds());
  std::printf("%-18s%.1f\n", "peak_mem_mb:", PeakMemoryMb());
  std::printf("%-18s%.2f\n", "mfu_percent:", peak > 0 ? 100 * achieved / peak : 0.0);
  std::printf("%-18s%.3f\n", "total_tokens_M:", report.total_tokens * 1e-6);
  std::printf("%-18s%lld\n", "num_steps:", static_cast<long long>(report.num_steps));
  std::printf("%-18s%.3f\n", "num_params_M:", report.num_params * 1e-6);
  std::printf("%-18s%d\n", "depth:", report.depth);
  std::fflush(stdout);
  return 0;
}

}  // namespace gpt
