// train.cpp: a small GPT that learns to predict bytes, trained for a fixed
// wall-clock budget on the CPU. This is the file an experiment changes: the
// model, its backward pass, the optimiser, the schedule, the training loop.
// Keep the interface of prepare/model_api.h (the Model, MakeModel, Train).
// Everything around it is fixed: prepare/train_main.cc reads the training
// data, calls Train and saves the checkpoint; prepare/serve_main.cc serves
// the saved model to the judges, trusted/evaluate (validation bits per byte,
// causality probes) and trusted/gradcheck (this model built tiny, its
// gradients against finite differences before any budget is spent).
//
// Model: token embedding -> DEPTH x [RMSNorm -> attention with QK-norm and
// RoPE -> residual, RMSNorm -> ReLU^2 MLP -> residual] -> RMSNorm -> head.
// Forward and backward are written out by hand in fp32; matrix products go
// through oneDNN, everything else is loops parallelised with OpenMP.
// Optimisers: Muon for the 2-D hidden weights, AdamW for embedding, head and
// gains. All memory comes from one arena allocated at start.

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "prepare/matmul.h"
#include "prepare/model_api.h"
#include "prepare/protocol.h"
#include "prepare/run_env.h"

using gpt::Batched;
using gpt::Mat;
using gpt::MatT;
using gpt::Post;

// ----------------------------------------------------------------------------
// Hyperparameters. One per line as `constexpr TYPE NAME = literal;` so that a
// search can rewrite the literals.
constexpr int DEPTH = 4;                // transformer blocks
constexpr int WIDTH = 192;              // model width C
constexpr int HEADS = 3;                // attention heads; head size = WIDTH / HEADS
constexpr int MLP_MULT = 4;             // MLP hidden size = MLP_MULT * WIDTH
constexpr int CONTEXT = 256;            // training sequence length (>= evaluator's 256)
constexpr int BATCH = 16;               // sequences per step
constexpr double MATRIX_LR = 0.04;      // Muon learning rate for the hidden matrices
constexpr double MUON_MOMENTUM = 0.95;  // Muon Nesterov momentum
constexpr int NS_STEPS = 5;             // Newton-Schulz iterations of Muon
constexpr double EMBED_LR = 0.15;       // AdamW learning rate of the token embedding
constexpr double HEAD_LR = 0.012;       // AdamW learning rate of the output head
constexpr double GAIN_LR = 0.02;        // AdamW learning rate of the norm gains
constexpr double ADAM_BETA1 = 0.8;
constexpr double ADAM_BETA2 = 0.95;
constexpr double WEIGHT_DECAY = 0.0;    // AdamW decoupled weight decay (embedding, head)
constexpr double WARMUP_FRAC = 0.02;    // fraction of the budget with a rising learning rate
constexpr double WARMDOWN_FRAC = 0.4;   // final fraction of the budget with a falling one
constexpr double FINAL_LR_FRAC = 0.05;  // learning rate at the end, relative to the peak
constexpr double ROPE_BASE = 10000.0;
constexpr int ATTN_BLOCK = 64;            // positions per attention block (speed only)
constexpr double MAX_LOSS = 20.0;         // a training loss above this (or NaN) stops the run
constexpr double PROGRESS_SECONDS = 5.0;  // seconds between progress lines

// ----------------------------------------------------------------------------
// Small utilities

// exp for the softmax loops: the Cephes polynomial, written so that the
// compiler vectorises it (std::exp does not vectorise without -ffast-math).
inline float FastExp(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = std::floor(x * 1.44269504f + 0.5f);
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// One allocation for everything a model needs. Sized by a first pass that
// only counts (base == nullptr), then carved in the same order.
class Arena {
 public:
  float* Take(size_t n) {
    n = (n + 15) & ~size_t{15};  // 64-byte alignment for every block
    float* p = base_ ? base_ + used_ : nullptr;
    used_ += n;
    return p;
  }
  void Allocate() {
    base_ = static_cast<float*>(std::aligned_alloc(64, used_ * sizeof(float)));
    std::memset(base_, 0, used_ * sizeof(float));
    used_ = 0;
  }
  size_t bytes() const { return used_ * sizeof(float); }
  ~Arena() { std::free(base_); }

 private:
  float* base_ = nullptr;
  size_t used_ = 0;
};

// ----------------------------------------------------------------------------
// Layers that are not matrix products. Each call runs on one thread over one
// worker's rows. Shapes: N rows (tokens) of C channels.

constexpr float kNormEps = 1e-6f;

// y = x / rms(x) * gain, per row; rstd[n] = 1 / rms(x[n]).
void RmsNormForward(const float* x, const float* gain, float* y, float* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const float* xr = x + static_cast<size_t>(n) * C;
    float* yr = y + static_cast<size_t>(n) * C;
    float ss = 0;
#pragma omp simd reduction(+ : ss)
    for (int c = 0; c < C; ++c) ss += xr[c] * xr[c];
    const float r = 1.0f / std::sqrt(ss / C + kNormEps);
    rstd[n] = r;
#pragma omp simd
    for (int c = 0; c < C; ++c) yr[c] = xr[c] * r * gain[c];
  }
}

// dx += (dRmsNorm/dx)^T dy; dgain = sum over rows of dy * x * rstd.
void RmsNormBackward(const float* dy, const float* x, const float* gain, const float* rstd,
                     float* dx, float* dgain, int N, int C) {
  std::fill(dgain, dgain + C, 0.0f);
  for (int n = 0; n < N; ++n) {
    const float* dyr = dy + static_cast<size_t>(n) * C;
    const float* xr = x + static_cast<size_t>(n) * C;
    float* dxr = dx + static_cast<size_t>(n) * C;
    const float r = rstd[n];
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int c = 0; c < C; ++c) dot += gain[c] * dyr[c] * xr[c];
    const float k = dot * r * r / C;
#pragma omp simd
    for (int c = 0; c < C; ++c) {
      dxr[c] += r * (gain[c] * dyr[c] - xr[c] * k);
      dgain[c] += dyr[c] * xr[c] * r;
    }
  }
}

// Attention works on blocks of TB positions, so that the score blocks above
// the causal diagonal are never computed. q, k, v are stored block-major,
// (T / TB, B, H, TB, D): every block is then a dense batch of (TB, D)
// matrices, which oneDNN multiplies much faster than strided views of one
// big matrix. The scores are the blocks (r, c <= r), each (B, H, TB, TB).
inline int AttnBlock(int T) { return T % ATTN_BLOCK == 0 ? ATTN_BLOCK : T; }

// Row of position t of head h of sequence b in the block-major layout.
inline size_t HeadRow(int b, int h, int t, int B, int H, int TB) {
  return ((static_cast<size_t>(t / TB) * B + b) * H + h) * TB + t % TB;
}

// Index of score block (r, c), c <= r, in a layer's score buffer.
inline size_t ScoreBlock(int r, int c) { return static_cast<size_t>(r) * (r + 1) / 2 + c; }

// Splits the (N, 3C) output of the qkv product into block-major q, k, v,
// applying QK-norm (RMSNorm over each head, with a gain shared by the
// heads) and rotary position embedding to q and k.
void QkvForward(const float* qkv, const float* qgain, const float* kgain, const float* rope_cos,
                const float* rope_sin, float* q, float* k, float* v, float* qrstd, float* krstd,
                int B, int T, int H, int D) {
  const int TB = AttnBlock(T);
  const int C = H * D, half = D / 2;
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* row = qkv + (static_cast<size_t>(b) * T + t) * 3 * C;
      const float* cs = rope_cos + static_cast<size_t>(t) * half;
      const float* sn = rope_sin + static_cast<size_t>(t) * half;
      for (int h = 0; h < H; ++h) {
        const size_t at = HeadRow(b, h, t, B, H, TB);
        for (int which = 0; which < 2; ++which) {
          const float* in = row + which * C + h * D;
          const float* gain = which == 0 ? qgain : kgain;
          float* dst = (which == 0 ? q : k) + at * D;
          float ss = 0;
#pragma omp simd reduction(+ : ss)
          for (int d = 0; d < D; ++d) ss += in[d] * in[d];
          const float r = 1.0f / std::sqrt(ss / D + kNormEps);
          (which == 0 ? qrstd : krstd)[at] = r;
#pragma omp simd
          for (int i = 0; i < half; ++i) {
            const float x1 = in[i] * r * gain[i], x2 = in[i + half] * r * gain[i + half];
            dst[i] = x1 * cs[i] - x2 * sn[i];
            dst[i + half] = x1 * sn[i] + x2 * cs[i];
          }
        }
        std::memcpy(v + at * D, row + 2 * C + h * D, D * sizeof(float));
      }
    }
  }
}

// The backward of QkvForward for q and k: from dq, dk (block-major) to the q
// and k columns of dqkv (N, 3C) and the gains' gradients. (The attention
// backward writes dv into dqkv's v columns directly.) `scratch`: 2 * D floats.
void QkvBackward(const float* dq, const float* dk, const float* qkv, const float* qgain,
                 const float* kgain, const float* qrstd, const float* krstd, const float* rope_cos,
                 const float* rope_sin, float* dqkv, float* dqgain, float* dkgain, float* scratch,
                 int B, int T, int H, int D) {
  const int C = H * D, half = D / 2, TB = AttnBlock(T);
  float* un = scratch;
  float* gu = scratch + D;
  std::fill(dqgain, dqgain + D, 0.0f);
  std::fill(dkgain, dkgain + D, 0.0f);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const size_t n = static_cast<size_t>(b) * T + t;
      const float* cs = rope_cos + static_cast<size_t>(t) * half;
      const float* sn = rope_sin + static_cast<size_t>(t) * half;
      for (int h = 0; h < H; ++h) {
        const size_t at = HeadRow(b, h, t, B, H, TB);
        for (int which = 0; which < 2; ++which) {
          const float* grad = (which == 0 ? dq : dk) + at * D;
          const float* in = qkv + n * 3 * C + which * C + h * D;
          const float* gain = which == 0 ? qgain : kgain;
          float* dgain = which == 0 ? dqgain : dkgain;
          float* out = dqkv + n * 3 * C + which * C + h * D;
          const float r = (which == 0 ? qrstd : krstd)[at];
          // Undo the rotation: the gradient with respect to the normed vector.
#pragma omp simd
          for (int i = 0; i < half; ++i) {
            un[i] = grad[i] * cs[i] + grad[i + half] * sn[i];
            un[i + half] = -grad[i] * sn[i] + grad[i + half] * cs[i];
          }
          float dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int d = 0; d < D; ++d) {
            dgain[d] += un[d] * in[d] * r;
            gu[d] = un[d] * gain[d];
            dot += gu[d] * in[d];
          }
          const float k = dot * r * r / D;
#pragma omp simd
          for (int d = 0; d < D; ++d) out[d] = r * (gu[d] - in[d] * k);
        }
      }
    }
  }
}

// In place on one layer's score blocks: p = softmax(scale * s) over the keys
// j <= i of each query i, and 0 above the diagonal of the diagonal blocks.
void CausalSoftmax(float* att, int B, int H, int T, float scale) {
  const int TB = AttnBlock(T), BH = B * H;
  const size_t block = static_cast<size_t>(BH) * TB * TB;
  for (int r = 0; r < T / TB; ++r) {
    for (int bh = 0; bh < BH; ++bh) {
      for (int i = 0; i < TB; ++i) {
        // Row i of blocks (r, 0..r): full rows left of the diagonal block.
        auto row = [&](int c) { return att + ScoreBlock(r, c) * block + (bh * TB + i) * TB; };
        const int seen = i + 1;  // keys query i sees in its own block: the causal mask
        auto len = [&](int c) { return c < r ? TB : seen; };
        float max = -INFINITY;
        for (int c = 0; c <= r; ++c) {
          const float* x = row(c);
          const int n = len(c);
#pragma omp simd reduction(max : max)
          for (int j = 0; j < n; ++j) max = std::max(max, x[j]);
        }
        max *= scale;
        float sum = 0;
        for (int c = 0; c <= r; ++c) {
          float* x = row(c);
          const int n = len(c);
#pragma omp simd reduction(+ : sum)
          for (int j = 0; j < n; ++j) {
            x[j] = FastExp(x[j] * scale - max);
            sum += x[j];
          }
        }
        const float inv = 1.0f / sum;
        for (int c = 0; c <= r; ++c) {
          float* x = row(c);
          const int n = len(c);
#pragma omp simd
          for (int j = 0; j < n; ++j) x[j] *= inv;
        }
        std::fill(row(r) + seen, row(r) + TB, 0.0f);
      }
    }
  }
}

// In place on the score gradients: ds = scale * p * (dp - sum_j p dp).
void SoftmaxBackward(const float* att, float* datt, int B, int H, int T, float scale) {
  const int TB = AttnBlock(T), BH = B * H;
  const size_t block = static_cast<size_t>(BH) * TB * TB;
  for (int r = 0; r < T / TB; ++r) {
    for (int bh = 0; bh < BH; ++bh) {
      for (int i = 0; i < TB; ++i) {
        auto at = [&](int c) { return ScoreBlock(r, c) * block + (bh * TB + i) * TB; };
        const int seen = i + 1;  // keys query i sees in its own block: the causal mask
        auto len = [&](int c) { return c < r ? TB : seen; };
        float dot = 0;
        for (int c = 0; c <= r; ++c) {
          const float* p = att + at(c);
          const float* d = datt + at(c);
          const int n = len(c);
#pragma omp simd reduction(+ : dot)
          for (int j = 0; j < n; ++j) dot += p[j] * d[j];
        }
        for (int c = 0; c <= r; ++c) {
          const float* p = att + at(c);
          float* d = datt + at(c);
          const int n = len(c);
#pragma omp simd
          for (int j = 0; j < n; ++j) d[j] = scale * p[j] * (d[j] - dot);
        }
        std::fill(datt + at(r) + seen, datt + at(r) + TB, 0.0f);
      }
    }
  }
}

// Views of the block-major layout for the attention products.
struct AttnViews {
  int B, H, T, D, TB;
  int64_t BlockStride() const { return static_cast<int64_t>(B) * H * TB * D; }
  int64_t ScoreStride() const { return static_cast<int64_t>(B) * H * TB * TB; }
  // Block r of q, k, v or their gradients: (B, H, TB, D); `t` its transpose.
  gpt::MatView Rows(const float* p, int r) const {
    return Batched(p + r * BlockStride(), {B, H, TB, D}, {H * TB * D, TB * D, D, 1});
  }
  gpt::MatView RowsT(const float* p, int r) const {
    return Batched(p + r * BlockStride(), {B, H, D, TB}, {H * TB * D, TB * D, 1, D});
  }
  // Score block (r, c): (B, H, TB, TB), or its transpose.
  gpt::MatView Scores(const float* p, int r, int c) const {
    return Batched(p + ScoreBlock(r, c) * ScoreStride(), {B, H, TB, TB},
                   {H * TB * TB, TB * TB, TB, 1});
  }
  gpt::MatView ScoresT(const float* p, int r, int c) const {
    return Batched(p + ScoreBlock(r, c) * ScoreStride(), {B, H, TB, TB},
                   {H * TB * TB, TB * TB, 1, TB});
  }
};

// Copies between the block-major layout (D floats per row) and a token-major
// matrix with row stride `ld` whose head h starts at column h * D.
void FromBlocks(const float* blocks, float* out, int64_t ld, int B, int H, int T, int D) {
  const int TB = AttnBlock(T);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < H; ++h) {
        std::memcpy(out + (static_cast<size_t>(b) * T + t) * ld + h * D,
                    blocks + HeadRow(b, h, t, B, H, TB) * D, D * sizeof(float));
      }
    }
  }
}

void ToBlocks(const float* in, int64_t ld, float* blocks, int B, int H, int T, int D) {
  const int TB = AttnBlock(T);
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < H; ++h) {
        std::memcpy(blocks + HeadRow(b, h, t, B, H, TB) * D,
                    in + (static_cast<size_t>(b) * T + t) * ld + h * D, D * sizeof(float));
      }
    }
  }
}

// Causal attention: y (token-major, N x C) = softmax(q k^T / sqrt(D)) v, over
// block-major q, k, v; att keeps the probabilities; yh is block-major scratch.
void AttentionForward(gpt::Matmul& mm, const float* q, const float* k, const float* v, float* att,
                      float* yh, float* y, int B, int H, int T, int D) {
  const AttnViews a{B, H, T, D, AttnBlock(T)};
  const int blocks = T / a.TB;
  for (int r = 0; r < blocks; ++r) {
    for (int c = 0; c <= r; ++c) mm(a.Rows(q, r), a.RowsT(k, c), a.Scores(att, r, c));
  }
  CausalSoftmax(att, B, H, T, 1.0f / std::sqrt(static_cast<float>(D)));
  for (int r = 0; r < blocks; ++r) {
    for (int c = 0; c <= r; ++c) {
      mm(a.Scores(att, r, c), a.Rows(v, c), a.Rows(yh, r),
         c == 0 ? Post::kNone : Post::kAccumulate);
    }
  }
  FromBlocks(yh, y, static_cast<int64_t>(H) * D, B, H, T, D);
}

// The backward of AttentionForward: from dy (token-major) to block-major dq,
// dk, dv. dyh is block-major scratch; datt the score gradients.
void AttentionBackward(gpt::Matmul& mm, const float* q, const float* k, const float* v,
                       const float* att, const float* dy, float* dyh, float* datt, float* dq,
                       float* dk, float* dv, int B, int H, int T, int D) {
  const AttnViews a{B, H, T, D, AttnBlock(T)};
  const int blocks = T / a.TB;
  ToBlocks(dy, static_cast<int64_t>(H) * D, dyh, B, H, T, D);
  for (int r = 0; r < blocks; ++r) {
    for (int c = 0; c <= r; ++c) mm(a.Rows(dyh, r), a.RowsT(v, c), a.Scores(datt, r, c));
  }
  // dv_c = sum over r >= c of att_rc^T dy_r
  for (int c = 0; c < blocks; ++c) {
    for (int r = c; r < blocks; ++r) {
      mm(a.ScoresT(att, r, c), a.Rows(dyh, r), a.Rows(dv, c),
         r == c ? Post::kNone : Post::kAccumulate);
    }
  }
  SoftmaxBackward(att, datt, B, H, T, 1.0f / std::sqrt(static_cast<float>(D)));
  for (int r = 0; r < blocks; ++r) {
    for (int c = 0; c <= r; ++c) {
      mm(a.Scores(datt, r, c), a.Rows(k, c), a.Rows(dq, r),
         c == 0 ? Post::kNone : Post::kAccumulate);
    }
  }
  for (int c = 0; c < blocks; ++c) {
    for (int r = c; r < blocks; ++r) {
      mm(a.ScoresT(datt, r, c), a.Rows(q, r), a.Rows(dk, c),
         r == c ? Post::kNone : Post::kAccumulate);
    }
  }
}

// Sum of the cross-entropies of `logits` (N, V) against `targets`; replaces
// the logits with the gradient of that sum divided by `total` (the number of
// targets of the whole batch, so the workers' gradients add up to the mean's).
double CrossEntropyInPlace(float* logits, const uint8_t* targets, int N, int V, int total) {
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    float* row = logits + static_cast<size_t>(n) * V;
    float max = row[0];
#pragma omp simd reduction(max : max)
    for (int v = 1; v < V; ++v) max = std::max(max, row[v]);
    const float target = row[targets[n]] - max;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int v = 0; v < V; ++v) {
      row[v] = FastExp(row[v] - max);
      sum += row[v];
    }
    loss += std::log(sum) - target;
    const float inv = 1.0f / (sum * total);
#pragma omp simd
    for (int v = 0; v < V; ++v) row[v] *= inv;
    row[targets[n]] -= 1.0f / total;
  }
  return loss;
}

// ----------------------------------------------------------------------------
// The model. Parameters live in one block, their gradients in another. The
// batch is split between worker threads (OMP_NUM_THREADS); each runs forward
// and backward on its sequences with its own activations and gradients, and
// the gradients are summed at the end: two barriers per step, not hundreds.

struct Dims {
  int depth, width, heads, head_dim, hidden, context, batch;
};

enum class Group { kMatrix, kEmbed, kHead, kGain };

struct Param {
  std::string name;
  size_t offset;  // into the parameter and gradient blocks
  int rows, cols;
  Group group;
  size_t size() const { return static_cast<size_t>(rows) * cols; }
};

class Gpt : public gpt::Model {
 public:
  explicit Gpt(const gpt::ModelSize& size);

  gpt::ModelSize size() const override {
    return {d_.depth, d_.width, d_.heads, d_.context, d_.batch};
  }
  int max_batch() const override { return d_.batch; }
  int max_context() const override { return d_.context; }
  void Logits(const uint8_t* tokens, int batch, int T, float* logits) override;
  double ForwardBackward(const uint8_t* inputs, const uint8_t* targets, int batch, int T) override;
  std::vector<gpt::ParamView> Params() override;

  void Init(uint64_t seed);
  const Dims& dims() const { return d_; }
  const std::vector<Param>& params() const { return params_; }
  float* value(const Param& p) { return values_ + p.offset; }
  float* grad(const Param& p) { return grads_ + p.offset; }
  int workers() const { return static_cast<int>(workers_.size()); }
  gpt::Matmul& context(int worker) { return workers_[worker].dnn; }
  /// Optimiser state carved from the arena: `floats` per parameter value.
  float* state() { return state_; }
  float* worker_scratch(int worker) { return workers_[worker].opt_scratch; }
  size_t total_params() const { return total_; }
  size_t arena_bytes() const { return arena_.bytes(); }
  double FlopsPerToken(int T) const;

  static constexpr int kStateFloats = 3;  // Muon momentum or Adam m and v, per value

 private:
  // Offsets of one block's parameters.
  struct LayerParams {
    size_t attn_gain, wqkv, qgain, kgain, wo, mlp_gain, w1, w2;
  };
  // One block's activations, kept for the backward pass (per worker).
  struct LayerActs {
    float* x;              // (N, C) residual stream entering the block
    float* h1;             // (N, C) normed input of attention
    float* rstd1;          // (N)
    float* qkv;            // (N, 3C)
    float *q, *k, *v;      // block-major (see AttnBlock) after QK-norm and RoPE
    float *qrstd, *krstd;  // per block-major row
    float* att;            // score blocks (r, c <= r): attention probabilities
    float* y;              // (N, C) attention output before its projection
    float* xmid;           // (N, C) residual stream after attention
    float* h2;             // (N, C) normed input of the MLP
    float* rstd2;          // (N)
    float* act;            // (N, F) relu(h2 W1^T)^2
  };
  struct Worker {
    int capacity;  // sequences
    float* grads;  // this worker's gradients, laid out like grads_
    std::vector<LayerActs> layers;
    float *xout, *hf, *rstdf, *logits;  // final residual, its norm, logits / dlogits
    float *dx, *dh, *dqkv, *dq, *dk, *dv, *datt, *dact, *yh, *scratch;  // backward scratch
    float* opt_scratch;  // for the optimiser's Newton-Schulz iteration
    gpt::Matmul dnn;
  };

  void Layout(Arena& a);
  const float* W(size_t offset) const { return values_ + offset; }
  void Forward(Worker& k, const uint8_t* tokens, int B, int T, float* logits);
  void Backward(Worker& k, const uint8_t* tokens, int B, int T);

  Dims d_;
  Arena arena_;
  std::vector<Param> params_;
  std::vector<LayerParams> layer_params_;
  size_t embed_, final_gain_, head_, total_ = 0;
  float *values_, *grads_, *state_;
  float *rope_cos_, *rope_sin_;  // (context, D/2)
  std::vector<Worker> workers_;
  std::vector<double> losses_;  // per worker, for ForwardBackward
};

Gpt::Gpt(const gpt::ModelSize& s)
    : d_{s.depth, s.width, s.heads, s.width / s.heads, MLP_MULT * s.width, s.context, s.batch},
      workers_(std::max(1, std::min(omp_get_max_threads(), s.batch))),
      losses_(workers_.size()) {
  Layout(arena_);  // count
  arena_.Allocate();
  Layout(arena_);  // carve
  const int half = d_.head_dim / 2;
  for (int t = 0; t < d_.context; ++t) {
    for (int i = 0; i < half; ++i) {
      const double angle = t * std::pow(ROPE_BASE, -2.0 * i / d_.head_dim);
      rope_cos_[t * half + i] = static_cast<float>(std::cos(angle));
      rope_sin_[t * half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

void Gpt::Layout(Arena& a) {
  const size_t C = d_.width, F = d_.hidden, V = gpt::kVocab, D = d_.head_dim, T = d_.context;
  params_.clear();
  layer_params_.assign(d_.depth, {});
  total_ = 0;
  auto param = [&](const std::string& name, int rows, int cols, Group g) {
    params_.push_back({name, total_, rows, cols, g});
    total_ += (static_cast<size_t>(rows) * cols + 15) & ~size_t{15};
    return params_.back().offset;
  };
  embed_ = param("embed", V, C, Group::kEmbed);
  for (int l = 0; l < d_.depth; ++l) {
    LayerParams& L = layer_params_[l];
    const std::string p = "layer" + std::to_string(l) + ".";
    L.attn_gain = param(p + "attn_gain", 1, C, Group::kGain);
    L.wqkv = param(p + "wqkv", 3 * C, C, Group::kMatrix);
    L.qgain = param(p + "qgain", 1, D, Group::kGain);
    L.kgain = param(p + "kgain", 1, D, Group::kGain);
    L.wo = param(p + "wo", C, C, Group::kMatrix);
    L.mlp_gain = param(p + "mlp_gain", 1, C, Group::kGain);
    L.w1 = param(p + "w1", F, C, Group::kMatrix);
    L.w2 = param(p + "w2", C, F, Group::kMatrix);
  }
  final_gain_ = param("final_gain", 1, C, Group::kGain);
  head_ = param("head", V, C, Group::kHead);
  values_ = a.Take(total_);
  grads_ = a.Take(total_);
  state_ = a.Take(kStateFloats * total_);
  rope_cos_ = a.Take(T * D / 2);
  rope_sin_ = a.Take(T * D / 2);
  size_t largest = 0;  // the largest matrix, for the Newton-Schulz scratch
  for (const Param& p : params_) largest = std::max(largest, p.size());
  const int W = static_cast<int>(workers_.size());
  for (int w = 0; w < W; ++w) {
    Worker& k = workers_[w];
    k.capacity = (d_.batch + W - 1) / W;
    const size_t N = static_cast<size_t>(k.capacity) * T,
                 BH = static_cast<size_t>(k.capacity) * d_.heads;
    k.grads = a.Take(total_);
    k.layers.resize(d_.depth);
    for (LayerActs& L : k.layers) {
      L.x = a.Take(N * C);
      L.h1 = a.Take(N * C);
      L.rstd1 = a.Take(N);
      L.qkv = a.Take(N * 3 * C);
      L.q = a.Take(N * C);
      L.k = a.Take(N * C);
      L.v = a.Take(N * C);
      L.qrstd = a.Take(BH * T);
      L.krstd = a.Take(BH * T);
      L.att = a.Take(BH * T * T);
      L.y = a.Take(N * C);
      L.xmid = a.Take(N * C);
      L.h2 = a.Take(N * C);
      L.rstd2 = a.Take(N);
      L.act = a.Take(N * F);
    }
    k.xout = a.Take(N * C);
    k.hf = a.Take(N * C);
    k.rstdf = a.Take(N);
    k.logits = a.Take(N * V);
    k.dx = a.Take(N * C);
    k.dh = a.Take(N * C);
    k.dqkv = a.Take(N * 3 * C);
    k.dq = a.Take(N * C);
    k.dk = a.Take(N * C);
    k.datt = a.Take(BH * T * T);
    k.dact = a.Take(N * F);
    k.yh = a.Take(N * C);
    k.dv = a.Take(N * C);
    k.scratch = a.Take(2 * D);
    k.opt_scratch = a.Take(4 * largest);
  }
}

void Gpt::Init(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Param& p : params_) {
    float* v = value(p);
    if (p.group == Group::kGain) {
      std::fill(v, v + p.size(), 1.0f);
      continue;
    }
    const float std =
        p.group == Group::kEmbed ? 1.0f : 1.0f / std::sqrt(static_cast<float>(p.cols));
    // Output projections and the head start at zero: each block begins as
    // the identity and the first prediction is uniform.
    const bool zero = p.group == Group::kHead || p.name.ends_with(".wo") || p.name.ends_with(".w2");
    for (size_t i = 0; i < p.size(); ++i) v[i] = zero ? 0.0f : std * normal(rng);
  }
}

double Gpt::FlopsPerToken(int T) const {
  // 6 per weight (forward 2, backward 4) for every product with a weight
  // matrix, plus the causal attention products: per block and token on
  // average 2 * C * (T + 1) forward, 3 times that with the backward.
  double weights = 0;
  for (const Param& p : params_) {
    if (p.group == Group::kMatrix || p.group == Group::kHead) weights += p.size();
  }
  return 6 * weights + 6.0 * d_.depth * d_.width * (T + 1);
}

std::vector<gpt::ParamView> Gpt::Params() {
  std::vector<gpt::ParamView> views;
  for (const Param& p : params_) views.push_back({p.name, value(p), grad(p), p.rows, p.cols});
  return views;
}

void Gpt::Forward(Worker& k, const uint8_t* tokens, int B, int T, float* logits) {
  const int C = d_.width, H = d_.heads, D = d_.head_dim, F = d_.hidden, V = gpt::kVocab;
  const int N = B * T;
  gpt::Matmul& mm = k.dnn;
  // x = embed[tokens]                                                   (N, C)
  for (int n = 0; n < N; ++n) {
    std::memcpy(k.layers[0].x + static_cast<size_t>(n) * C, W(embed_) + tokens[n] * C,
                C * sizeof(float));
  }
  for (int l = 0; l < d_.depth; ++l) {
    const LayerParams& P = layer_params_[l];
    LayerActs& L = k.layers[l];
    float* xnext = l + 1 < d_.depth ? k.layers[l + 1].x : k.xout;
    // Attention: qkv = norm(x) Wqkv^T                                  (N, 3C)
    RmsNormForward(L.x, W(P.attn_gain), L.h1, L.rstd1, N, C);
    mm(Mat(L.h1, N, C, C), MatT(W(P.wqkv), C, 3 * C, C), Mat(L.qkv, N, 3 * C, 3 * C));
    QkvForward(L.qkv, W(P.qgain), W(P.kgain), rope_cos_, rope_sin_, L.q, L.k, L.v, L.qrstd, L.krstd,
               B, T, H, D);
    // y = causal softmax(q k^T / sqrt(D)) v                            (N, C)
    AttentionForward(mm, L.q, L.k, L.v, L.att, k.yh, L.y, B, H, T, D);
    // xmid = x + y Wo^T
    std::memcpy(L.xmid, L.x, sizeof(float) * N * C);
    mm(Mat(L.y, N, C, C), MatT(W(P.wo), C, C, C), Mat(L.xmid, N, C, C), Post::kAccumulate);
    // MLP: xnext = xmid + relu(norm(xmid) W1^T)^2 W2^T
    RmsNormForward(L.xmid, W(P.mlp_gain), L.h2, L.rstd2, N, C);
    mm(Mat(L.h2, N, C, C), MatT(W(P.w1), C, F, C), Mat(L.act, N, F, F), Post::kReluSquare);
    std::memcpy(xnext, L.xmid, sizeof(float) * N * C);
    mm(Mat(L.act, N, F, F), MatT(W(P.w2), F, C, F), Mat(xnext, N, C, C), Post::kAccumulate);
  }
  RmsNormForward(k.xout, W(final_gain_), k.hf, k.rstdf, N, C);
  mm(Mat(k.hf, N, C, C), MatT(W(head_), C, V, C), Mat(logits, N, V, V));
}

// Backward from the logits' gradient (in k.logits) to the worker's gradients.
void Gpt::Backward(Worker& k, const uint8_t* tokens, int B, int T) {
  const int C = d_.width, H = d_.heads, D = d_.head_dim, F = d_.hidden, V = gpt::kVocab;
  const int N = B * T;
  gpt::Matmul& mm = k.dnn;
  auto G = [&](size_t offset) { return k.grads + offset; };
  // Head: dhead = dlogits^T hf; dhf = dlogits head.
  mm(MatT(k.logits, V, N, V), Mat(k.hf, N, C, C), Mat(G(head_), V, C, C));
  mm(Mat(k.logits, N, V, V), Mat(W(head_), V, C, C), Mat(k.dh, N, C, C));
  std::fill(k.dx, k.dx + static_cast<size_t>(N) * C, 0.0f);
  RmsNormBackward(k.dh, k.xout, W(final_gain_), k.rstdf, k.dx, G(final_gain_), N, C);
  for (int l = d_.depth - 1; l >= 0; --l) {
    const LayerParams& P = layer_params_[l];
    LayerActs& L = k.layers[l];
    // MLP. dx holds the gradient of the block's output, which the residual
    // passes on unchanged to xmid.
    mm(MatT(k.dx, C, N, C), Mat(L.act, N, F, F), Mat(G(P.w2), C, F, F));
    mm(Mat(k.dx, N, C, C), Mat(W(P.w2), C, F, F), Mat(k.dact, N, F, F));
    // d relu(u)^2 / du = 2 relu(u) = 2 sqrt(act)
    const size_t NF = static_cast<size_t>(N) * F;
#pragma omp simd
    for (size_t i = 0; i < NF; ++i) k.dact[i] *= 2.0f * std::sqrt(L.act[i]);
    mm(MatT(k.dact, F, N, F), Mat(L.h2, N, C, C), Mat(G(P.w1), F, C, C));
    mm(Mat(k.dact, N, F, F), Mat(W(P.w1), F, C, C), Mat(k.dh, N, C, C));
    RmsNormBackward(k.dh, L.xmid, W(P.mlp_gain), L.rstd2, k.dx, G(P.mlp_gain), N, C);
    // Attention projection: dWo = dxmid^T y; dy = dxmid Wo (token-major).
    mm(MatT(k.dx, C, N, C), Mat(L.y, N, C, C), Mat(G(P.wo), C, C, C));
    mm(Mat(k.dx, N, C, C), Mat(W(P.wo), C, C, C), Mat(k.dh, N, C, C));
    AttentionBackward(mm, L.q, L.k, L.v, L.att, k.dh, k.yh, k.datt, k.dq, k.dk, k.dv, B, H, T, D);
    FromBlocks(k.dv, k.dqkv + 2 * C, 3 * C, B, H, T, D);
    QkvBackward(k.dq, k.dk, L.qkv, W(P.qgain), W(P.kgain), L.qrstd, L.krstd, rope_cos_, rope_sin_,
                k.dqkv, G(P.qgain), G(P.kgain), k.scratch, B, T, H, D);
    mm(MatT(k.dqkv, 3 * C, N, 3 * C), Mat(L.h1, N, C, C), Mat(G(P.wqkv), 3 * C, C, C));
    mm(Mat(k.dqkv, N, 3 * C, 3 * C), Mat(W(P.wqkv), 3 * C, C, C), Mat(k.dh, N, C, C));
    RmsNormBackward(k.dh, L.x, W(P.attn_gain), L.rstd1, k.dx, G(P.attn_gain), N, C);
  }
  // Embedding: scatter-add the rows.
  float* dembed = G(embed_);
  std::fill(dembed, dembed + static_cast<size_t>(V) * C, 0.0f);
  for (int n = 0; n < N; ++n) {
    float* dst = dembed + static_cast<size_t>(tokens[n]) * C;
    const float* src = k.dx + static_cast<size_t>(n) * C;
#pragma omp simd
    for (int c = 0; c < C; ++c) dst[c] += src[c];
  }
}

void Gpt::Logits(const uint8_t* tokens, int batch, int T, float* logits) {
  const int W = workers();
#pragma omp parallel num_threads(W)
  {
    const int w = omp_get_thread_num(), b0 = batch * w / W, b1 = batch * (w + 1) / W;
    if (b1 > b0) {
      Forward(workers_[w], tokens + static_cast<size_t>(b0) * T, b1 - b0, T,
              logits + static_cast<size_t>(b0) * T * gpt::kVocab);
    }
  }
}

double Gpt::ForwardBackward(const uint8_t* inputs, const uint8_t* targets, int batch, int T) {
  const int W = workers();
  std::fill(losses_.begin(), losses_.end(), 0.0);
#pragma omp parallel num_threads(W)
  {
    const int w = omp_get_thread_num(), b0 = batch * w / W, b1 = batch * (w + 1) / W;
    Worker& k = workers_[w];
    if (b1 > b0) {
      const size_t at = static_cast<size_t>(b0) * T;
      Forward(k, inputs + at, b1 - b0, T, k.logits);
      losses_[w] =
          CrossEntropyInPlace(k.logits, targets + at, (b1 - b0) * T, gpt::kVocab, batch * T);
      Backward(k, inputs + at, b1 - b0, T);
    } else {
      std::fill(k.grads, k.grads + total_, 0.0f);
    }
#pragma omp barrier
    // Sum the workers' gradients, each thread a slice.
    const size_t i0 = total_ * w / W, i1 = total_ * (w + 1) / W;
    for (size_t i = i0; i < i1; ++i) {
      float s = 0;
      for (int v = 0; v < W; ++v) s += workers_[v].grads[i];
      grads_[i] = s;
    }
  }
  double loss = 0;
  for (double l : losses_) loss += l;
  return loss / (static_cast<double>(batch) * T);
}

std::unique_ptr<gpt::Model> MakeModel(const gpt::ModelSize& size, uint64_t seed) {
  auto model = std::make_unique<Gpt>(size);
  model->Init(seed);
  return model;
}

// ----------------------------------------------------------------------------
// Optimisers, one step for all parameters, spread over the worker threads.
//
// Muon for the hidden matrices: Nesterov momentum, then the update replaced
// by the nearest semi-orthogonal matrix (quintic Newton-Schulz iteration with
// Keller Jordan's coefficients). The qkv matrix is three (C, C) blocks, each
// orthogonalised on its own. AdamW (bias-corrected) for the rest.

struct Block {
  const Param* param;
  size_t offset;  // into the parameter block
  int rows, cols;
};

// x (rows, cols), Frobenius norm 1 -> approximately orthogonal. For a wide
// matrix X <- aX + (bA + cA^2) X with A = X X^T; for a tall one the same
// from the right with A = X^T X. `scratch` holds 3 * rows * cols floats.
float* NewtonSchulz(gpt::Matmul& mm, float* x, float* scratch, int rows, int cols) {
  constexpr float a = 3.4445f, b = -4.7750f, c = 2.0315f;
  const bool wide = rows <= cols;
  const int s = wide ? rows : cols;
  const size_t n = static_cast<size_t>(rows) * cols, ss = static_cast<size_t>(s) * s;
  float* y = scratch;
  float* A = scratch + n;
  float* B = A + ss;
  for (int it = 0; it < NS_STEPS; ++it) {
    if (wide) {
      mm(Mat(x, s, cols, cols), MatT(x, cols, s, cols), Mat(A, s, s, s));
    } else {
      mm(MatT(x, s, rows, cols), Mat(x, rows, s, cols), Mat(A, s, s, s));
    }
    mm(Mat(A, s, s, s), Mat(A, s, s, s), Mat(B, s, s, s));
#pragma omp simd
    for (size_t i = 0; i < ss; ++i) B[i] = b * A[i] + c * B[i];
    std::copy(x, x + n, y);
    if (wide) {
      mm(Mat(B, s, s, s), Mat(x, s, cols, cols), Mat(y, s, cols, cols), Post::kAccumulate, a);
    } else {
      mm(Mat(x, rows, s, cols), Mat(B, s, s, s), Mat(y, rows, s, cols), Post::kAccumulate, a);
    }
    std::swap(x, y);
  }
  return x;
}

class Optimizer {
 public:
  explicit Optimizer(Gpt& model) : model_(model) {
    // Muon's blocks, each given to the worker with the least work so far.
    std::vector<double> load(model.workers(), 0.0);
    shares_.resize(model.workers());
    for (const Param& p : model.params()) {
      if (p.group != Group::kMatrix) {
        adam_.push_back(&p);
        continue;
      }
      const int blocks = p.rows == 3 * p.cols ? 3 : 1;
      const int rows = p.rows / blocks;
      for (int i = 0; i < blocks; ++i) {
        const int w = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
        load[w] += static_cast<double>(rows) * p.cols * std::min(rows, p.cols);
        shares_[w].push_back({&p, p.offset + static_cast<size_t>(i) * rows * p.cols, rows, p.cols});
      }
    }
  }

  void Step(double lr_mult) {
    ++t_;
    const int W = model_.workers();
#pragma omp parallel num_threads(W)
    {
      const int w = omp_get_thread_num();
      for (const Block& blk : shares_[w]) MuonStep(w, blk, lr_mult);
      for (const Param* p : adam_)
        AdamStep(*p, lr_mult, p->size() * w / W, p->size() * (w + 1) / W);
    }
  }

 private:
  void MuonStep(int w, const Block& blk, double lr_mult) {
    const size_t n = static_cast<size_t>(blk.rows) * blk.cols;
    const float* g = model_.grad(*blk.param) + (blk.offset - blk.param->offset);
    float* m = model_.state() + blk.offset;  // momentum
    float* w_ = model_.value(*blk.param) + (blk.offset - blk.param->offset);
    float* x = model_.worker_scratch(w);
    const float beta = MUON_MOMENTUM;
    double norm = 0;
    // Nesterov: m = beta m + g; update = g + beta m.
    for (size_t i = 0; i < n; ++i) {
      m[i] = beta * m[i] + g[i];
      x[i] = g[i] + beta * m[i];
      norm += static_cast<double>(x[i]) * x[i];
    }
    const float inv = static_cast<float>(1.0 / (std::sqrt(norm) + 1e-7));
    for (size_t i = 0; i < n; ++i) x[i] *= inv;
    const float* u = NewtonSchulz(model_.context(w), x, x + n, blk.rows, blk.cols);
    const float step = static_cast<float>(MATRIX_LR * lr_mult *
                                          std::sqrt(std::max(1.0, 1.0 * blk.rows / blk.cols)));
#pragma omp simd
    for (size_t i = 0; i < n; ++i) w_[i] -= step * u[i];
  }

  // Entries [i0, i1) of one parameter.
  void AdamStep(const Param& p, double lr_mult, size_t i0, size_t i1) {
    const double base = p.group == Group::kEmbed  ? EMBED_LR
                        : p.group == Group::kHead ? HEAD_LR
                                                  : GAIN_LR;
    const float lr = static_cast<float>(base * lr_mult);
    const float decay = p.group == Group::kGain ? 1.0f : static_cast<float>(1 - lr * WEIGHT_DECAY);
    const float b1 = ADAM_BETA1, b2 = ADAM_BETA2;
    const float k1 = static_cast<float>(1 / (1 - std::pow(ADAM_BETA1, t_)));
    const float k2 = static_cast<float>(1 / (1 - std::pow(ADAM_BETA2, t_)));
    float* v = model_.value(p);
    const float* g = model_.grad(p);
    float* m1 = model_.state() + p.offset;
    float* m2 = model_.state() + model_.total_params() + p.offset;
#pragma omp simd
    for (size_t i = i0; i < i1; ++i) {
      m1[i] = b1 * m1[i] + (1 - b1) * g[i];
      m2[i] = b2 * m2[i] + (1 - b2) * g[i] * g[i];
      v[i] = v[i] * decay - lr * (m1[i] * k1) / (std::sqrt(m2[i] * k2) + 1e-8f);
    }
  }

  Gpt& model_;
  std::vector<std::vector<Block>> shares_;  // Muon blocks per worker
  std::vector<const Param*> adam_;
  int t_ = 0;
};

// Learning-rate multiplier at `progress` (elapsed / budget): linear warmup,
// constant, then linear warmdown to FINAL_LR_FRAC.
double Schedule(double progress) {
  if (progress < WARMUP_FRAC) return (progress + 1e-3) / (WARMUP_FRAC + 1e-3);
  if (progress < 1 - WARMDOWN_FRAC) return 1.0;
  const double down = (1 - progress) / WARMDOWN_FRAC;
  return FINAL_LR_FRAC + (1 - FINAL_LR_FRAC) * std::max(0.0, down);
}

// ----------------------------------------------------------------------------
// Training

int64_t CountParams(const Gpt& model) {
  int64_t n = 0;
  for (const Param& p : model.params()) n += static_cast<int64_t>(p.size());
  return n;
}

std::unique_ptr<gpt::Model> Train(const gpt::TrainSetup& setup, gpt::TrainClaims* claims,
                                  std::string* err) {
  const std::string_view train = setup.train;
  if (train.size() < static_cast<size_t>(CONTEXT) + 2) {
    *err = "the training split is too small";
    return nullptr;
  }
  auto model = std::make_unique<Gpt>(gpt::ModelSize{DEPTH, WIDTH, HEADS, CONTEXT, BATCH});
  model->Init(setup.seed);
  Optimizer optimizer(*model);
  std::printf(
      "model: depth %d width %d heads %d context %d batch %d, %.3fM parameters, "
      "arena %.0f MB, %d worker threads\n",
      DEPTH, WIDTH, HEADS, CONTEXT, BATCH, CountParams(*model) * 1e-6,
      model->arena_bytes() / 1048576.0, model->workers());

  // Random windows of the training split.
  std::mt19937_64 rng(setup.seed * 0x9E3779B97F4A7C15ull + 1);
  std::vector<uint8_t> inputs(BATCH * CONTEXT), targets(BATCH * CONTEXT);
  auto next_batch = [&] {
    for (int b = 0; b < BATCH; ++b) {
      const size_t at = rng() % (train.size() - CONTEXT - 1);
      std::memcpy(&inputs[b * CONTEXT], train.data() + at, CONTEXT);
      std::memcpy(&targets[b * CONTEXT], train.data() + at + 1, CONTEXT);
    }
  };

  // One step before the clock starts creates the oneDNN primitives and
  // touches the memory, so that the budget measures training only.
  next_batch();
  model->ForwardBackward(inputs.data(), targets.data(), BATCH, CONTEXT);

  const gpt::TrainingClock clock(setup.cpu_clock, model->workers());
  double elapsed = 0, smooth = 0, last_print = -PROGRESS_SECONDS;
  int64_t step = 0;
  while ((elapsed = clock.Seconds()) < setup.budget_seconds) {
    const double lr = Schedule(elapsed / setup.budget_seconds);
    next_batch();
    const double loss = model->ForwardBackward(inputs.data(), targets.data(), BATCH, CONTEXT);
    if (!std::isfinite(loss) || loss > MAX_LOSS) {
      *err = "training loss is " + std::to_string(loss) + " at step " + std::to_string(step);
      return nullptr;
    }
    optimizer.Step(lr);
    ++step;
    smooth = step == 1 ? loss : 0.9 * smooth + 0.1 * loss;
    if (elapsed - last_print >= PROGRESS_SECONDS) {
      last_print = elapsed;
      std::printf("progress: elapsed=%.1f step=%lld loss=%.4f lr=%.3f tok/s=%.0f\n", elapsed,
                  static_cast<long long>(step), smooth, lr,
                  step * BATCH * CONTEXT / std::max(clock.Seconds(), 1e-9));
      std::fflush(stdout);
    }
  }
  claims->training_seconds = clock.Seconds();
  claims->num_steps = step;
  claims->total_tokens = static_cast<double>(step) * BATCH * CONTEXT;
  claims->flops_per_token = model->FlopsPerToken(CONTEXT);
  return model;
}
