// The transformer block stack's shape, parameter layout, FLOP counts and elementwise math, shared by
// the CPU, the GPU and the float64 reference.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/hd.h"
#include "kernels/common/names.h"
#include "kernels/train/mlp.h"  // GELU (tanh form) and Adam: one definition for both training steps

namespace gtb::xfmr {

// How causal attention is computed. materialised: the scores and probabilities of every head are
// stored (batch * heads * seq_len^2 floats per layer) and the backward reads them. fused: query
// blocks of kFusedBlock rows, scores only on and below the diagonal, only the row log-sum-exp kept;
// the backward recomputes the probabilities block by block (flash-attention's memory, without its
// online softmax: a block's row is short enough to softmax in one pass).
enum class Attention : int { materialised = 0, fused = 1 };
inline constexpr NameTable<Attention, 2> kAttentionNames = {
    {{Attention::materialised, "materialised"}, {Attention::fused, "fused"}}};
inline const char* to_string(Attention a) { return name_of(kAttentionNames, a); }
inline Attention attention_from_string(const std::string& s) { return parse_name(kAttentionNames, s, "attention"); }
inline constexpr int kFusedBlock = 64;

// Pre-LN decoder blocks: x += Wo attn(LN1(x) Wqkv); x += W2 gelu(LN2(x) W1). The loss is
// 0.5 * mean over tokens and channels of (y - target)^2 on the last block's output y.
struct Config {
  int layers = 2;
  int d_model = 128;
  int heads = 4;
  int seq_len = 64;
  int batch = 2;
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;  // AdamW, PyTorch's defaults
  float ln_eps = 1e-5f;
  std::uint64_t seed = 2023;

  int head_dim() const { return d_model / heads; }
  int ffn() const { return 4 * d_model; }
  std::int64_t tokens() const { return std::int64_t(batch) * seq_len; }
  void validate() const {
    if (layers < 1 || d_model < 1 || heads < 1 || seq_len < 1 || batch < 1)
      throw std::invalid_argument("transformer needs layers, d_model, heads, seq_len and batch >= 1 (got layers=" +
                                  std::to_string(layers) + " d_model=" + std::to_string(d_model) +
                                  " heads=" + std::to_string(heads) + " seq_len=" + std::to_string(seq_len) +
                                  " batch=" + std::to_string(batch) + ")");
    if (d_model % heads != 0)
      throw std::invalid_argument("transformer: d_model " + std::to_string(d_model) + " is not a multiple of heads " +
                                  std::to_string(heads));
    if (!(lr > 0.0f)) throw std::invalid_argument("transformer: learning rate must be > 0");
  }
};

// The parameters of one block, in this order in the flat buffer; every tensor starts on a 16-float
// (64-byte) boundary. W_qkv is d x 3d (columns: Q of every head, then K, then V), W_o d x d,
// W_1 d x 4d, W_2 4d x d, all row-major (input index first).
enum class P : int { ln1_g, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2, count };
inline constexpr const char* kParamNames[] = {"ln1.gamma", "ln1.beta", "attn.w_qkv", "attn.b_qkv",
                                              "attn.w_o",  "attn.b_o", "ln2.gamma",  "ln2.beta",
                                              "mlp.w_1",   "mlp.b_1",  "mlp.w_2",    "mlp.b_2"};

struct Layout {
  static constexpr int kCount = int(P::count);
  static constexpr std::size_t kAlign = 16;
  static std::size_t pad(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
  std::vector<std::size_t> off;   // layers * kCount offsets, in elements
  std::vector<std::size_t> size;  // kCount element counts (the same for every layer)
  std::size_t total = 0;
  int layers = 0;

  explicit Layout(const Config& c) : layers(c.layers) {
    const std::size_t d = std::size_t(c.d_model), f = std::size_t(c.ffn());
    size = {d, d, d * 3 * d, 3 * d, d * d, d, d, d, d * f, f, f * d, d};
    std::size_t o = 0;
    for (int l = 0; l < c.layers; ++l)
      for (int t = 0; t < kCount; ++t) {
        off.push_back(o);
        o += pad(size[std::size_t(t)]);
      }
    total = o;
  }
  std::size_t at(int layer, P t) const { return off[std::size_t(layer) * kCount + std::size_t(t)]; }
  std::size_t n(P t) const { return size[std::size_t(t)]; }
  std::size_t parameters() const {
    std::size_t s = 0;
    for (std::size_t v : size) s += v;
    return s * std::size_t(layers);
  }
  static bool is_matrix(P t) { return t == P::w_qkv || t == P::w_o || t == P::w_1 || t == P::w_2; }
};

// FLOPs of one step (forward + backward), the counting rule of docs/transformer.md.
// GEMMs (projections and MLP): 6 * tokens * 12 d^2 per layer (forward 2*T*in*out, backward twice
// that, over Wqkv d x 3d, Wo d x d, W1 d x 4d, W2 4d x d). Attention (scores and weighted sum):
// counted causally, 6 * batch * seq_len^2 * d per layer -- half of the 12 * B * S^2 * d a full S x S
// would take (forward QK^T and PV: 2 * 2 * S^2 * d per sequence, backward twice that).
inline double gemm_flops(const Config& c) {
  const double d = c.d_model;
  return 6.0 * double(c.tokens()) * 12.0 * d * d * c.layers;
}
inline double attention_flops(const Config& c) {
  return 6.0 * double(c.batch) * double(c.seq_len) * double(c.seq_len) * double(c.d_model) * c.layers;
}
inline double step_flops(const Config& c) { return gemm_flops(c) + attention_flops(c); }

// ---- elementwise math, one definition for float (CPU, GPU) and double (the reference) ----
GTB_HD float hd_max(float a, float b) { return a > b ? a : b; }
GTB_HD double hd_max(double a, double b) { return a > b ? a : b; }

// GELU (tanh form, PyTorch's approximate="tanh") and its derivative: the MLP step's definition.
template <class T>
GTB_HD T gelu(T z) { return mlp::act_forward(mlp::Act::gelu, z); }
template <class T>
GTB_HD T gelu_derivative(T z) { return mlp::act_derivative(mlp::Act::gelu, z); }

// Layer norm of one element from its row's mean and reciprocal standard deviation.
template <class T>
GTB_HD T ln_forward(T x, T mean, T rstd, T gamma, T beta) { return (x - mean) * rstd * gamma + beta; }
template <class T>
GTB_HD T ln_rstd(T var, T eps) { return T(1) / mlp::hd_sqrt(var + eps); }
// dL/dx of one element of a layer-norm row: xhat = (x - mean) * rstd, dxhat = dy * gamma, and the
// row means mean(dxhat) and mean(dxhat * xhat).
template <class T>
GTB_HD T ln_backward(T dxhat, T xhat, T rstd, T mean_dxhat, T mean_dxhat_xhat) {
  return rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
}

// Softmax of one causal score row: p = exp(scale * s - m) / sum with m the row's max of scale * s.
template <class T>
GTB_HD T softmax_p(T s, T scale, T row_max, T inv_sum) { return mlp::hd_exp(scale * s - row_max) * inv_sum; }
// dL/ds of one score from p, dL/dp and the row's dot(p, dL/dp) (the scale of the scores included).
template <class T>
GTB_HD T softmax_backward(T p, T dp, T row_dot, T scale) { return p * (dp - row_dot) * scale; }

// AdamW, PyTorch's form: decoupled decay w *= 1 - lr * wd, then the Adam update.
template <class T>
GTB_HD void adamw(T& w, T& m, T& v, T g, T lr, T b1, T b2, T eps, T wd, T c1, T c2) {
  w -= lr * wd * w;
  mlp::adam(w, m, v, g, lr, b1, b2, eps, c1, c2);
}

// bfloat16 rounding (to nearest even) kept in a float: a GEMM operand of the BF16 step. NaN stays NaN.
GTB_HD float round_bf16(float x) {
  std::uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  float r;
  __builtin_memcpy(&r, &u, sizeof r);
  return r;
}

}  // namespace gtb::xfmr
