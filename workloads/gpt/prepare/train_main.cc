// build/train: the fixed main of the trainer. Reads the verified training
// split (the only data the run sees), lets train.cpp's Train train a model
// for the budget, writes the checkpoint to $RATCHET_RUN_DIR/model.bin in
// the fixed format (prepare/checkpoint.h), and prints what the run claims
// about itself after "---". It never prints val_bpb: only trusted/evaluate,
// talking to build/serve, scores the checkpoint.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "checkpoint.h"
#include "manifest.h"
#include "model_api.h"
#include "protocol.h"
#include "run_env.h"

namespace {

// Captured when the program's static objects are built, i.e. at start-up.
const auto kProcessStart = std::chrono::steady_clock::now();

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

// This machine's fp32 peak, measured by `make data` (prepare/peak.cc).
double PeakGflops(const std::string& data_dir) {
  if (const char* v = std::getenv("GPT_PEAK_GFLOPS")) return std::atof(v);
  std::ifstream in(data_dir + "/peak_gflops.txt");
  double g = 0;
  return (in >> g) ? g : 0;
}

int Fail(const std::string& message) {
  std::printf("FAIL: %s\n", message.c_str());
  std::fflush(stdout);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: %s  (environment: RATCHET_BUDGET_SECONDS, RATCHET_SEED, "
                 "RATCHET_RUN_DIR, GPT_DATA_DIR, GPT_CLOCK)\n",
                 argv[0]);
    return 2;
  }
  std::string err;
  gpt::RunEnv env;
  if (!gpt::ReadRunEnv(&env, &err)) return Fail(err);
  std::string train;
  if (!gpt::ReadVerified(env.data_dir, "train.bin", &train, &err)) return Fail(err);

  gpt::TrainSetup setup;
  setup.train = train;
  setup.budget_seconds = env.budget_seconds;
  setup.seed = env.seed;
  setup.cpu_clock = env.cpu_clock;
  gpt::TrainClaims claims;
  std::unique_ptr<gpt::Model> model = Train(setup, &claims, &err);
  if (!model) return Fail(err.empty() ? "Train returned no model" : err);
  // Refuse here what the evaluator would refuse, before anyone waits for it.
  if (model->max_context() < gpt::kEvalContext || model->max_batch() < 1) {
    return Fail("the model accepts batches of " + std::to_string(model->max_batch()) +
                " sequences of at most " + std::to_string(model->max_context()) +
                " bytes; the evaluator needs sequences of " + std::to_string(gpt::kEvalContext));
  }

  const std::string path = env.run_dir + "/model.bin";
  if (!gpt::WriteCheckpoint(*model, path, &err)) return Fail(err);
  std::printf("saved %s\n", path.c_str());

  int64_t params = 0;
  for (const gpt::ParamView& p : model->Params()) params += static_cast<int64_t>(p.size());
  const double seconds = claims.training_seconds > 0 ? claims.training_seconds : 1e-9;
  const double gflops = claims.flops_per_token * claims.total_tokens / seconds * 1e-9;
  const double peak = PeakGflops(env.data_dir);
  std::printf("throughput: %.0f tokens/s, %.1f GFLOP/s (model FLOPs)\n",
              claims.total_tokens / seconds, gflops);
  // Claims about the run, recorded beside the score; the score is not here.
  std::printf("---\n");
  std::printf("%-18s%.1f\n", "training_seconds:", claims.training_seconds);
  std::printf("%-18s%.1f\n", "total_seconds:", ProcessSeconds());
  std::printf("%-18s%.1f\n", "peak_mem_mb:", PeakMemoryMb());
  std::printf("%-18s%.2f\n", "mfu_percent:", peak > 0 ? 100 * gflops / peak : 0.0);
  std::printf("%-18s%.3f\n", "total_tokens_M:", claims.total_tokens * 1e-6);
  std::printf("%-18s%lld\n", "num_steps:", static_cast<long long>(claims.num_steps));
  std::printf("%-18s%.3f\n", "num_params_M:", params * 1e-6);
  std::printf("%-18s%d\n", "depth:", model->size().depth);
  std::fflush(stdout);
  return 0;
}
