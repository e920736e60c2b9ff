// The contract between the editable trainer (train.cpp) and the fixed parts
// that judge it (evaluator, gradient check). train.cpp may change anything
// about its model as long as it keeps this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
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

class Model {
 public:
  virtual ~Model() = default;
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
  virtual std::vector<ParamView> Params() = 0;
};

/// The sizes every GPT has. The gradient check builds train.cpp's model at a
/// tiny size through MakeModel (which train.cpp defines).
struct ModelSize {
  int depth = 0;
  int width = 0;
  int heads = 0;
  int context = 0;
  int batch = 0;
};

}  // namespace gpt

/// Defined by train.cpp: its model at `size`, initialised from `seed`.
std::unique_ptr<gpt::Model> MakeModel(const gpt::ModelSize& size, uint64_t seed);
