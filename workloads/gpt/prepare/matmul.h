// Matrix products for the trainer, through oneDNN (which picks its own
// kernels for this CPU, unaffected by the machine's BLAS settings). Kept out
// of train.cpp so that an experiment's rebuild does not parse oneDNN's
// headers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace gpt {

/// A matrix, or a batch of matrices, in memory: 2 or 4 dimensions (batch,
/// batch, rows, cols), each with a stride in elements. Transposes and
/// head-interleaved layouts are just other strides.
struct MatView {
  const float* p = nullptr;
  int rank = 2;
  std::array<int64_t, 4> dims{};
  std::array<int64_t, 4> strides{};
};

/// Row-major (rows, cols) with leading dimension ld.
inline MatView Mat(const float* p, int64_t rows, int64_t cols, int64_t ld) {
  return {p, 2, {rows, cols}, {ld, 1}};
}
/// The transpose of a row-major (cols, rows) matrix with leading dimension ld.
inline MatView MatT(const float* p, int64_t rows, int64_t cols, int64_t ld) {
  return {p, 2, {rows, cols}, {1, ld}};
}
/// A (b0, b1) batch of (rows, cols) matrices with the given strides.
inline MatView Batched(const float* p, std::array<int64_t, 4> dims,
                       std::array<int64_t, 4> strides) {
  return {p, 4, dims, strides};
}

/// What happens to the product before it is stored.
enum class Post {
  kNone,        // c = a b
  kAccumulate,  // c = a b + scale * c
  kRelu,        // c = relu(a b)
  kReluSquare,  // c = relu(a b)^2
  kGeluTanh,    // c = gelu(a b), tanh approximation
};

/// Runs products on the calling thread, with a cached oneDNN primitive per
/// shape. Not thread-safe: each thread owns its own context. Call it from
/// inside an OpenMP parallel region to keep a product on one thread.
class Matmul {
 public:
  Matmul();
  ~Matmul();
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;

  /// c = post(a @ b). Shapes must agree: (.., M, K) x (.., K, N) -> (.., M, N).
  void operator()(const MatView& a, const MatView& b, const MatView& c, Post post = Post::kNone,
                  float scale = 1.0f);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpt
