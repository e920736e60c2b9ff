// trusted/evaluate: the loop's verifier, built from prepare/ alone (never
// from train.cpp). It owns the validation data: reads data/val.bin (or
// data/audit.bin with RATCHET_VERIFY_SPLIT=audit) through the manifest,
// asks the candidate's model server (build/serve, connected by the engine:
// requests on fd 3, answers on fd 4) only for logits of windows it chooses,
// computes the cross-entropy itself, runs the causality probes hidden among
// the windows, and prints the summary: "---", then "val_bpb: ..." and the
// rest. Any failure prints "FAIL: <reason>" and exits 1, with no score.
//   trusted/evaluate        (environment: see run_env.h, VerifyEnv)
// By hand: prepare/with-server 'build/serve RUN/model.bin' trusted/evaluate
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "checkpoint.h"
#include "evaluator.h"
#include "manifest.h"
#include "protocol.h"
#include "run_env.h"
#include "serve_client.h"

namespace {

constexpr int kEvalBatch = 16;  // windows per request: efficient products, any model's batch
constexpr int kProbes = 32;

int Fail(const std::string& message) {
  std::printf("FAIL: %s\n", message.c_str());
  std::fflush(stdout);
  return 1;
}

bool SameShapes(const gpt::ModelInfo& info, const gpt::CheckpointHeader& h) {
  if (info.tensors.size() != h.tensors.size()) return false;
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const gpt::TensorInfo &a = info.tensors[i], &b = h.tensors[i];
    if (a.name != b.name || a.rows != b.rows || a.cols != b.cols) return false;
  }
  return true;
}

// The server's description, checked against the checkpoint it must serve.
bool Describe(gpt::ServeClient& client, const gpt::CheckpointHeader& h, gpt::ModelInfo* info,
              std::string* err) {
  if (!client.Info(info, err)) return false;
  if (!SameShapes(*info, h)) {
    *err = "the model server describes other tensors than the checkpoint holds";
    return false;
  }
  if (info->max_context < gpt::kEvalContext) {
    *err = "the model accepts sequences of at most " + std::to_string(info->max_context) +
           " bytes; the evaluator needs " + std::to_string(gpt::kEvalContext);
    return false;
  }
  return true;
}

gpt::LogitsFn Source(gpt::ServeClient& client) {
  return [&client](const uint8_t* tokens, int batch, int T, std::vector<float>* logits,
                   std::string* err) { return client.Logits(tokens, batch, T, logits, err); };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s  (a model server on fds 3 and 4: prepare/with-server)\n",
                 argv[0]);
    return 2;
  }
  // A server that dies must give an error on write, not kill the judge.
  signal(SIGPIPE, SIG_IGN);
  const auto start = std::chrono::steady_clock::now();
  std::string err;
  gpt::VerifyEnv env;
  if (!gpt::ReadVerifyEnv(&env, &err)) return Fail(err);
  std::string split;
  if (!gpt::ReadVerified(env.data_dir, env.split + ".bin", &split, &err)) return Fail(err);
  gpt::CheckpointHeader header;
  if (!gpt::ReadCheckpointHeader(env.run_dir + "/model.bin", &header, &err)) return Fail(err);

  gpt::ServeClient client(env.write_fd, env.read_fd, "the model server");
  std::unique_ptr<gpt::ServeClient> prober;
  gpt::ModelInfo info, probe_info;
  if (!Describe(client, header, &info, &err)) return Fail(err);
  if (env.probe_write_fd >= 0) {
    prober = std::make_unique<gpt::ServeClient>(env.probe_write_fd, env.probe_read_fd,
                                                "the probe's model server");
    if (!Describe(*prober, header, &probe_info, &err)) return Fail(err);
  }

  gpt::EvalOptions options;
  options.batch = std::min(kEvalBatch, info.max_batch);
  if (prober) options.batch = std::min(options.batch, probe_info.max_batch);
  options.probes = kProbes;
  // The order of the windows and the probes: unknown to the server, and
  // without effect on the score (every window is scored, summed in order).
  std::random_device device;
  options.seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  gpt::EvalResult result;
  const gpt::LogitsFn score = Source(client);
  const gpt::LogitsFn probe = prober ? Source(*prober) : gpt::LogitsFn();
  if (!gpt::EvaluateSplit(split, options, score, prober ? &probe : nullptr, &result, &err)) {
    return Fail(err);
  }
  if (!client.Quit(&err) || (prober && !prober->Quit(&err))) return Fail(err);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("---\n");
  // The loop's metric is val_bpb; an audit run scores the audit split under
  // that name too, and says so in audit_bpb.
  std::printf("%-18s%.6f\n", "val_bpb:", result.bpb);
  if (env.split == "audit") std::printf("%-18s%.6f\n", "audit_bpb:", result.bpb);
  std::printf("%-18s%.1f\n", "eval_seconds:", seconds);
  std::printf("%-18s%zu\n", "eval_windows:", result.windows);
  std::printf("%-18s%d\n", "eval_probes:", result.probes);
  std::printf("%-18s%.3f\n", "num_params_M:", header.TotalValues() * 1e-6);
  std::printf("%-18s%d\n", "depth:", header.size.depth);
  std::fflush(stdout);
  return 0;
}
