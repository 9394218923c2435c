// Host-only decisions of the GPU transformer step (no CUDA types, so CPU tests read them): how the
// materialised attention's GEMMs are batched, the device buffers and their bytes, the precision's
// tolerance, and which configuration the float64 check runs.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/precision.h"
#include "kernels/transformer/block.h"
#include "kernels/transformer/reference.h"

namespace gtb::xfmr::gpu {

// cublasGemmStridedBatchedEx needs one stride per operand between the matrices of a batch, and the
// step's (sample, head) matrices have two: heads are dh columns apart inside a token row, samples
// seq rows apart. So one strided-batched call covers one axis and the step loops over the other,
// the shorter one (fewer calls). The probabilities are laid out [sample][head][i][j].
struct AttentionBatching {
  bool over_heads = true;  // one call per sample, its heads batched; false: one call per head
  int calls = 1, count = 1;
  long long qkv_stride = 0;  // between batched Q (K, V) matrices, in elements of the tokens x 3d buffer
  long long ctx_stride = 0;  // between batched context matrices (tokens x d)
  long long p_stride = 0;    // between batched probability matrices
  long long qkv_step = 0, ctx_step = 0, p_step = 0;  // the same offsets from one call to the next
};
inline AttentionBatching attention_batching(const Config& c) {
  const long long S = c.seq_len, d = c.d_model, dh = c.head_dim(), H = c.heads, B = c.batch;
  AttentionBatching a;
  a.over_heads = B <= H;
  if (a.over_heads) {
    a.calls = int(B), a.count = int(H);
    a.qkv_stride = dh, a.ctx_stride = dh, a.p_stride = S * S;
    a.qkv_step = S * 3 * d, a.ctx_step = S * d, a.p_step = H * S * S;
  } else {
    a.calls = int(H), a.count = int(B);
    a.qkv_stride = S * 3 * d, a.ctx_stride = S * d, a.p_stride = H * S * S;
    a.qkv_step = dh, a.ctx_step = dh, a.p_step = S * S;
  }
  return a;
}

// cuBLAS's view of a row-major product C (M x N) = op(A) op(B): a row-major matrix is its
// column-major transpose, so cuBLAS computes C^T (N x M) = op(B)^T op(A)^T, its A being the
// row-major B and its B the row-major A. The stored matrices' column-major shapes are what
// cuBLASLt's layouts take.
struct ColumnMajorGemm {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int a_rows = 0, a_cols = 0, lda = 0;  // cuBLAS's A: the row-major B as stored
  int b_rows = 0, b_cols = 0, ldb = 0;  // cuBLAS's B: the row-major A as stored
  int ldc = 0;
};
inline ColumnMajorGemm column_major(bool ta, bool tb, int M, int N, int K, int lda, int ldb, int ldc) {
  ColumnMajorGemm g;
  g.trans_a = tb, g.trans_b = ta;
  g.m = N, g.n = M, g.k = K;
  g.a_rows = tb ? K : N, g.a_cols = tb ? N : K, g.lda = ldb;
  g.b_rows = ta ? M : K, g.b_cols = ta ? K : M, g.ldb = lda;
  g.ldc = ldc;
  return g;
}

// The materialised attention's strided-batched GEMMs, row-major per (sample, head) matrix. An
// operand names its buffer and, in the tokens x 3d buffers, the column where its part starts
// (query 0, key d, value 2d).
enum class Buf { qkv, probs, ctx, dctx, dqkv, dprobs };
struct Operand {
  Buf buf = Buf::qkv;
  int col = 0;
};
struct AttentionGemm {
  const char* what;
  bool ta, tb;
  int M, N, K;
  Operand a, b, c;
};
// forward: scores, then (after the softmax) the context.
inline std::vector<AttentionGemm> attention_forward_gemms(const Config& c) {
  const int S = c.seq_len, dh = c.head_dim(), d = c.d_model;
  return {{"scores = Q K^T", false, true, S, S, dh, {Buf::qkv, 0}, {Buf::qkv, d}, {Buf::probs, 0}},
          {"ctx = P V", false, false, S, dh, S, {Buf::probs, 0}, {Buf::qkv, 2 * d}, {Buf::ctx, 0}}};
}
// backward: dV and dP, then (after the softmax backward turns dP into dS in place) dQ and dK.
inline std::vector<AttentionGemm> attention_backward_gemms(const Config& c) {
  const int S = c.seq_len, dh = c.head_dim(), d = c.d_model;
  return {{"dV = P^T dO", true, false, S, dh, S, {Buf::probs, 0}, {Buf::dctx, 0}, {Buf::dqkv, 2 * d}},
          {"dP = dO V^T", false, true, S, S, dh, {Buf::dctx, 0}, {Buf::qkv, 2 * d}, {Buf::dprobs, 0}},
          {"dQ = dS K", false, false, S, dh, S, {Buf::dprobs, 0}, {Buf::qkv, d}, {Buf::dqkv, 0}},
          {"dK = dS^T Q", true, false, S, dh, S, {Buf::dprobs, 0}, {Buf::qkv, 0}, {Buf::dqkv, d}}};
}
// Where an operand's matrices lie in its buffer (elements): the first at `offset`, the batched
// ones `stride` apart, successive calls `step` apart, rows `ld` apart.
struct View {
  long long offset = 0, stride = 0, step = 0;
  int ld = 0;
};
inline View view(const Config& c, const AttentionBatching& a, Operand o) {
  switch (o.buf) {
    case Buf::qkv:
    case Buf::dqkv: return {o.col, a.qkv_stride, a.qkv_step, 3 * c.d_model};
    case Buf::ctx:
    case Buf::dctx: return {o.col, a.ctx_stride, a.ctx_step, c.d_model};
    case Buf::probs:
    case Buf::dprobs: break;
  }
  return {0, a.p_stride, a.p_step, c.seq_len};
}

// Element counts of the step's device buffers (floats unless named bf16). The model allocates
// exactly these, so the accounting and the allocator's high-water mark cannot drift apart.
struct Buffers {
  std::size_t params = 0;          // each of params, grads, adam m, adam v (Layout::total)
  std::size_t bf16_weights = 0;    // the BF16 copy of the weights the GEMMs read (bf16 only)
  std::size_t per_layer = 0;       // stored activations of one layer: h1, qkv, ctx, x_mid, h2 (T x 7d), u, g (T x 8d), 4 row stats
  std::size_t per_layer_attention = 0;  // materialised: the probabilities; fused: the row log-sum-exp
  std::size_t residual = 0;        // the residual stream between layers: (layers + 1) x T x d
  std::size_t scratch = 0;         // shared by the layers: dx, dx_mid, dh (3 T d), dff (4 T d), dqkv (3 T d), tmp (T d), row loss (T)
  std::size_t attention_scratch = 0;  // materialised: dP (B H S^2); fused: delta (B H S)
  std::size_t bf16_slot = 0;       // each of the two BF16 operand slots (bf16 only)
  std::size_t data = 0;            // the targets (T d); the inputs are the residual stream's first slice
  std::size_t workspace_bytes = 0; // the cuBLAS / cuBLASLt workspace
  std::size_t bytes(int layers) const {
    const std::size_t f = 4 * (4 * params + per_layer * std::size_t(layers) + per_layer_attention * std::size_t(layers) +
                               residual + scratch + attention_scratch + data);
    return f + 2 * (bf16_weights + 2 * bf16_slot) + workspace_bytes;
  }
};
inline constexpr std::size_t kWorkspaceBytes = 32u << 20;  // NVIDIA's advice for Hopper's cuBLASLt
inline Buffers buffers(const Config& c, Attention a, Precision p) {
  const std::size_t T = std::size_t(c.tokens()), d = std::size_t(c.d_model), L = std::size_t(c.layers);
  const std::size_t heads_rows = std::size_t(c.batch) * std::size_t(c.heads) * std::size_t(c.seq_len);
  const std::size_t probs = heads_rows * std::size_t(c.seq_len);
  const bool mat = a == Attention::materialised, bf16 = p == Precision::bf16;
  Buffers b;
  b.params = Layout(c).total;
  b.bf16_weights = bf16 ? b.params : 0;
  b.per_layer = T * d * 15 + 4 * T;
  b.per_layer_attention = mat ? probs : heads_rows;
  b.residual = (L + 1) * T * d;
  b.scratch = T * d * 11 + T;
  b.attention_scratch = mat ? probs : heads_rows;
  // A slot holds the larger GEMM operand cast to BF16: an activation (up to T x 4d) or the
  // probabilities and their gradient.
  std::size_t slot = T * 4 * d;
  if (mat && probs > slot) slot = probs;
  b.bf16_slot = bf16 ? slot : 0;
  b.data = T * d;
  b.workspace_bytes = kWorkspaceBytes;
  return b;
}

// Tolerances per precision. fp32 and bf16 are the CPU step's (docs/transformer.md derives them).
// tf32: the same path of sqrt(18 * layers) products on a gradient's way, each with TF32's truncation
// bias of up to 2^-10 (tf32_product_bias(), precision.h) in place of a rounded BF16 product's
// sqrt(2/3) * 2^-8, times the margin of 3; never tighter than FP32's. The float64 model of the step
// with truncated operands (tests/cpu/test_transformer_gpu_host.cpp) keeps under half of it.
inline Tolerance tf32_tolerance(const Config& c) {
  const double g = 3.0 * std::sqrt(18.0 * c.layers) * tf32_product_bias();
  const Tolerance f = fp32_tolerance();
  return Tolerance{std::fmax(g, f.loss_rtol), std::fmax(g, f.grad_rtol), f.update_rtol};
}
inline Tolerance tolerance(const Config& c, Precision p) {
  switch (p) {
    case Precision::fp32: return fp32_tolerance();
    case Precision::tf32: return tf32_tolerance(c);
    case Precision::bf16: return bf16_tolerance(c);
    default: break;
  }
  throw std::invalid_argument(std::string("the GPU transformer step runs in fp32, tf32 or bf16, not ") + to_string(p));
}

// The float64 reference's cost: the step's FLOPs (its DGEMMs compute the same products) and the
// bytes it holds (every activation and every head's probabilities in double).
inline double reference_bytes(const Config& c) {
  const double T = double(c.tokens()), d = c.d_model;
  const double per_layer = T * d * 14 + double(c.batch) * c.heads * double(c.seq_len) * c.seq_len;
  return 8.0 * (per_layer * c.layers + double(c.seq_len) * c.seq_len);
}
inline constexpr double kReferenceFlops = 2e10, kReferenceBytes = 1.5e9;
inline constexpr int kCheckedSeqMax = 256, kCheckedSeqMin = 64;

// Which configuration the check runs: the record's own where the reference's cost is bounded;
// otherwise the same d_model, heads, precision and attention on one layer and the fewest sequences
// that take the record's batching of the attention GEMMs (attention_batching: one sequence where
// batch <= heads, heads + 1 where the record's batch exceeds its heads and each call batches the
// samples of one head), seq_len clamped to kCheckedSeqMax and halved (not below kCheckedSeqMin)
// while still over the bound. Sequences and layers are what the reduction drops: the code path of
// every kernel is the same.
struct CheckedConfig {
  Config config;
  bool reduced = false;
  std::string note;  // what was checked, for the record's info
};
inline bool reference_affordable(const Config& c) {
  return step_flops(c) <= kReferenceFlops && reference_bytes(c) <= kReferenceBytes;
}
inline CheckedConfig checked_config(const Config& c) {
  CheckedConfig r;
  r.config = c;
  if (reference_affordable(c)) {
    r.note = "the record's own configuration";
    return r;
  }
  Config s = c;
  s.batch = c.batch <= c.heads ? 1 : c.heads + 1, s.layers = 1;
  if (s.seq_len > kCheckedSeqMax) s.seq_len = kCheckedSeqMax;
  while (!reference_affordable(s) && s.seq_len / 2 >= kCheckedSeqMin) s.seq_len /= 2;
  r.config = s;
  r.reduced = true;
  r.note = "reduced: layers 1, batch " + std::to_string(s.batch) + ", seq_len " + std::to_string(s.seq_len) + " at the record's d_model " +
           std::to_string(c.d_model) + ", heads " + std::to_string(c.heads) +
           ", precision, attention and attention batching (the float64 reference of the record's own configuration costs " +
           std::to_string(step_flops(c) / 1e9) + " GFLOP)";
  return r;
}

}  // namespace gtb::xfmr::gpu

namespace gtb::xfmr::gpu {

// ---- the GPU sweeps (bench/transformer/gpu.cpp registers them; the CPU records keep theirs) ----
// One row of a zipped axis: layers, d_model, heads, seq_len, batch.
using Row = std::vector<std::int64_t>;
// Sequence length from 128 to 8192 at a fixed number of tokens per step (batch = tokens / seq_len).
inline std::vector<Row> seq_rows(std::int64_t tokens, std::int64_t seq_lo = 128, std::int64_t seq_hi = 8192) {
  std::vector<Row> r;
  for (std::int64_t s = seq_lo; s <= seq_hi; s *= 2)
    if (tokens % s == 0) r.push_back({s, tokens / s});
  return r;
}
// d_model from 256 to 4096, heads keeping head_dim 64 up to 16 heads and 128 beyond.
inline std::vector<Row> width_rows(std::int64_t lo = 256, std::int64_t hi = 4096) {
  std::vector<Row> r;
  for (std::int64_t d = lo; d <= hi; d *= 2) r.push_back({d, d <= 1024 ? d / 64 : d / 128});
  return r;
}

}  // namespace gtb::xfmr::gpu
