// The contract between the editable trainer (train.cpp) and the fixed code
// around it: the trainer's and the model server's mains (train_main.cc,
// serve_main.cc), which link train.cpp, and the judges (trusted/evaluate,
// trusted/gradcheck), which never do and only talk to the server. train.cpp
// may change anything about its model and its training as long as it keeps
// this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpt {

/// One parameter tensor: its values and the gradient ForwardBackward wrote.
/// `rows` x `cols` for a matrix, `rows` = 1 for a vector.
struct ParamView {
  std::string name;
  float* value = nullptr;
  float* grad = nullptr;
  int rows = 0;
  int cols = 0;
  size_t size() const { return static_cast<size_t>(rows) * cols; }
};

/// A parameter tensor's name and shape, without its values (what a
/// checkpoint and the model server's description record).
struct TensorInfo {
  std::string name;
  int rows = 0;
  int cols = 0;
  size_t size() const { return static_cast<size_t>(rows) * cols; }
};

/// The sizes every GPT has. A checkpoint records them; the model server
/// rebuilds the model through MakeModel(size) before loading its tensors,
/// and the gradient check builds a tiny one the same way.
struct ModelSize {
  int depth = 0;
  int width = 0;
  int heads = 0;
  int context = 0;
  int batch = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  /// The size it was made with (MakeModel(size()) makes the same shapes).
  virtual ModelSize size() const = 0;
  /// The largest batch and sequence length Logits and ForwardBackward accept.
  virtual int max_batch() const = 0;
  virtual int max_context() const = 0;
  /// Next-byte logits (batch, T, kVocab) for `tokens` (batch, T). Row t may
  /// depend only on tokens[0..t] of its own sequence: the evaluator checks.
  virtual void Logits(const uint8_t* tokens, int batch, int T, float* logits) = 0;
  /// Training: mean cross-entropy (nats) of predicting `targets` (batch, T)
  /// from `inputs` (batch, T); writes every parameter's gradient of it.
  virtual double ForwardBackward(const uint8_t* inputs, const uint8_t* targets, int batch,
                                 int T) = 0;
  /// Every parameter tensor, in a fixed order, with unique names: the
  /// checkpoint stores exactly these.
  virtual std::vector<ParamView> Params() = 0;
};

/// What the fixed trainer main hands to Train.
struct TrainSetup {
  std::string_view train;      // the training split (data/train.bin), verified
  double budget_seconds = 60;  // RATCHET_BUDGET_SECONDS: training time, start-up excluded
  uint64_t seed = 0;           // RATCHET_SEED
  bool cpu_clock = false;      // GPT_CLOCK=cpu (see run_env.h, TrainingClock)
};

/// What Train says about its run. The trainer prints these as claims; the
/// score comes only from the evaluator.
struct TrainClaims {
  double training_seconds = 0;
  int64_t num_steps = 0;
  double total_tokens = 0;
  double flops_per_token = 0;  // forward + backward, for throughput and mfu_percent
};

}  // namespace gpt

/// Defined by train.cpp: its model at `size`, initialised from `seed`.
std::unique_ptr<gpt::Model> MakeModel(const gpt::ModelSize& size, uint64_t seed);

/// Defined by train.cpp: trains a model on `setup.train` for
/// `setup.budget_seconds` and returns it (the caller saves the checkpoint);
/// nullptr with `err` set when training failed (e.g. the loss exploded).
std::unique_ptr<gpt::Model> Train(const gpt::TrainSetup& setup, gpt::TrainClaims* claims,
                                  std::string* err);
