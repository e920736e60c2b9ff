// The fixed evaluator, linked into the trainer (the role autoresearch's
// prepare.py plays). The model only hands over logits for windows the
// evaluator chooses; the evaluator computes log-softmax and cross-entropy
// itself, checks that no logit depends on a later byte, and prints the
// summary the loop reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model_api.h"

namespace gpt {

/// What the trainer reports about its run, printed in the summary.
struct TrainReport {
  double training_seconds = 0;
  int64_t num_steps = 0;
  double total_tokens = 0;
  /// Training FLOPs (forward + backward) per token, for mfu_percent.
  double flops_per_token = 0;
  int64_t num_params = 0;
  int depth = 0;
};

/// Bits per byte of `model` on `bytes`: the cross-entropy of every target in
/// non-overlapping windows of kEvalContext targets, in nats / ln 2 / bytes.
bool ScoreBitsPerByte(Model& model, std::string_view bytes, double* bpb, std::string* err);

/// The causality probe: on `tokens` (batch, T), changes single bytes at
/// positions drawn from `seed` and checks that no logit before the change,
/// and none of another sequence of the batch, moves. On failure `err` says
/// where the model looked ahead.
bool CheckCausality(Model& model, const uint8_t* tokens, int batch, int T, uint64_t seed,
                    std::string* err);

/// Reads `split` ("val", or "audit" to re-score a kept model) from the
/// verified data directory, runs the probe, scores the model and prints the
/// summary ("---", then "val_bpb: ..." and the rest). Returns the exit status
/// for main: 0, or 1 after printing "FAIL: <reason>".
int EvaluateAndReport(Model& model, const TrainReport& report, const std::string& data_dir,
                      const std::string& split = "val");

/// Seconds since this process started (for total_seconds).
double ProcessSeconds();

/// Peak resident memory of this process in MB.
double PeakMemoryMb();

}  // namespace gpt
