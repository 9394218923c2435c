// The CPU transformer step: planned GEMMs, materialised or fused causal attention, fused OpenMP passes.
#include "kernels/transformer/cpu/blocks.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/clones.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/common/cpu/rows.h"
#include "kernels/common/verify.h"
#include "kernels/vectorize/elementwise.h"  // exp_approx: an exp the softmax loops can vectorize

namespace gtb::xfmr {

namespace {

// The passes are compiled for AVX-512 and AVX2 as well as the baseline and picked at run time (the
// project builds for the generic x86-64 target).

enum Site : std::size_t {
  s_qkv, s_o, s_w1, s_w2, s_dw2, s_dg, s_dw1, s_dh2, s_dwo, s_do, s_dwqkv, s_dh1,
  s_scores, s_pv, s_dv, s_dp, s_dq, s_dk, s_count
};

// Rows split over the threads: the one definition the MLP step uses too.
template <class Fn>
void par_rows(std::size_t n, double work, Fn fn) {
  cpu::parallel_ranges(n, work, fn);
}

GTB_CPU_CLONES void round_range(float* __restrict x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) x[i] = round_bf16(x[i]);
}

// dst = src rounded to BF16, in one pass (a copy then a rounding in place would move the bytes twice).
GTB_CPU_CLONES void round_copy(const float* __restrict src, float* __restrict dst, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] = round_bf16(src[i]);
}

// Layer norm of rows [r0, r1): h = LN(x) (rounded for BF16), with each row's mean and rstd kept.
GTB_CPU_CLONES void ln_rows(const float* __restrict x, float* __restrict h, float* __restrict mean,
                           float* __restrict rstd, const float* __restrict gam, const float* __restrict bet,
                           std::size_t r0, std::size_t r1, std::size_t d, float eps, bool rnd) {
  for (std::size_t r = r0; r < r1; ++r) {
    const float* __restrict xr = x + r * d;
    float* __restrict hr = h + r * d;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (std::size_t j = 0; j < d; ++j) s += xr[j];
    const float mu = s / float(d);
    float q = 0;
#pragma omp simd reduction(+ : q)
    for (std::size_t j = 0; j < d; ++j) q += (xr[j] - mu) * (xr[j] - mu);
    const float rs = ln_rstd(q / float(d), eps);
    mean[r] = mu, rstd[r] = rs;
    if (rnd) {
#pragma omp simd
      for (std::size_t j = 0; j < d; ++j) hr[j] = round_bf16(ln_forward(xr[j], mu, rs, gam[j], bet[j]));
    } else {
#pragma omp simd
      for (std::size_t j = 0; j < d; ++j) hr[j] = ln_forward(xr[j], mu, rs, gam[j], bet[j]);
    }
  }
}

// out = a + b + bias over rows [r0, r1) (the residual), in place allowed for out == a.
GTB_CPU_CLONES void residual_rows(const float* a, const float* __restrict b, const float* __restrict bias, float* out,
                                 std::size_t r0, std::size_t r1, std::size_t d) {
  for (std::size_t r = r0; r < r1; ++r) {
#pragma omp simd
    for (std::size_t j = 0; j < d; ++j) out[r * d + j] = a[r * d + j] + b[r * d + j] + bias[j];
  }
}

GTB_CPU_CLONES void bias_rows(float* __restrict y, const float* __restrict bias, std::size_t r0, std::size_t r1,
                             std::size_t n, bool rnd) {
  for (std::size_t r = r0; r < r1; ++r) {
    float* __restrict yr = y + r * n;
    if (rnd) {
#pragma omp simd
      for (std::size_t j = 0; j < n; ++j) yr[j] = round_bf16(yr[j] + bias[j]);
    } else {
#pragma omp simd
      for (std::size_t j = 0; j < n; ++j) yr[j] += bias[j];
    }
  }
}

GTB_CPU_CLONES void bias_gelu_rows(float* __restrict u, float* __restrict g, const float* __restrict bias,
                                  std::size_t r0, std::size_t r1, std::size_t n, bool rnd) {
  gtb::cpu::bias_then_rows(u, g, bias, r0, r1, n, [rnd](float v) {
    const float a = gelu(v);
    return rnd ? round_bf16(a) : a;
  });
}

// Column sums of y rows [r0, r1) added to part; with `copy`, also y rounded to BF16 into copy.
GTB_CPU_CLONES void colsum_rows(const float* __restrict y, float* __restrict part, float* __restrict copy,
                               std::size_t r0, std::size_t r1, std::size_t n) {
  for (std::size_t r = r0; r < r1; ++r) {
    const float* __restrict yr = y + r * n;
#pragma omp simd
    for (std::size_t j = 0; j < n; ++j) part[j] += yr[j];
    if (copy) {
#pragma omp simd
      for (std::size_t j = 0; j < n; ++j) copy[r * n + j] = round_bf16(yr[j]);
    }
  }
}

// g = g * gelu'(u) (rounded for BF16), column sums into part.
GTB_CPU_CLONES void gelu_back_rows(float* __restrict g, const float* __restrict u, float* __restrict part,
                                  std::size_t r0, std::size_t r1, std::size_t n, bool rnd) {
  for (std::size_t r = r0; r < r1; ++r) {
    float* __restrict gr = g + r * n;
    const float* __restrict ur = u + r * n;
#pragma omp simd
    for (std::size_t j = 0; j < n; ++j) {
      const float v = gr[j] * gelu_derivative(ur[j]);
      part[j] += v;
      gr[j] = rnd ? round_bf16(v) : v;
    }
  }
}

// dx = dres + LN backward of dy (rows [r0, r1)); dgamma, dbeta into part (2 x d).
GTB_CPU_CLONES void ln_back_rows(const float* __restrict dy, const float* __restrict x, const float* __restrict mean,
                                const float* __restrict rstd, const float* __restrict gam, const float* dres,
                                float* dx, float* __restrict part, std::size_t r0, std::size_t r1, std::size_t d) {
  float* __restrict pg = part;
  float* __restrict pb = part + d;
  for (std::size_t r = r0; r < r1; ++r) {
    const float* __restrict dyr = dy + r * d;
    const float* __restrict xr = x + r * d;
    const float mu = mean[r], rs = rstd[r];
    float s1 = 0, s2 = 0;
#pragma omp simd reduction(+ : s1, s2)
    for (std::size_t j = 0; j < d; ++j) {
      const float xh = (xr[j] - mu) * rs;
      const float dxh = dyr[j] * gam[j];
      pg[j] += dyr[j] * xh;
      pb[j] += dyr[j];
      s1 += dxh;
      s2 += dxh * xh;
    }
    s1 /= float(d), s2 /= float(d);
#pragma omp simd
    for (std::size_t j = 0; j < d; ++j) {
      const float xh = (xr[j] - mu) * rs;
      dx[r * d + j] = dres[r * d + j] + ln_backward(dyr[j] * gam[j], xh, rs, s1, s2);
    }
  }
}

// Causal softmax of score rows [i0, i0 + rows) of width n (row r's keys: j <= i0 + r), in place;
// the row log-sum-exp (of the scaled scores) into lse when given.
GTB_CPU_CLONES void softmax_rows(float* __restrict s, std::size_t ld, int i0, int rows, int n, float scale,
                                float* __restrict lse, bool rnd) {
  for (int r = 0; r < rows; ++r) {
    float* __restrict sr = s + std::size_t(r) * ld;
    const int last = std::min(n, i0 + r + 1);
    float mx = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : mx)
    for (int j = 0; j < last; ++j) mx = hd_max(mx, scale * sr[j]);
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < last; ++j) {
      const float e = exp_approx(scale * sr[j] - mx);
      sr[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int j = 0; j < last; ++j) sr[j] = rnd ? round_bf16(sr[j] * inv) : sr[j] * inv;
    for (int j = last; j < n; ++j) sr[j] = 0.0f;
    if (lse) lse[r] = mx + mlp::hd_log(sum);
  }
}

// Probabilities recomputed from the scores and the row log-sum-exp (fused backward).
GTB_CPU_CLONES void softmax_from_lse(float* __restrict s, std::size_t ld, int i0, int rows, int n, float scale,
                                    const float* __restrict lse, bool rnd) {
  for (int r = 0; r < rows; ++r) {
    float* __restrict sr = s + std::size_t(r) * ld;
    const int last = std::min(n, i0 + r + 1);
    const float l = lse[r];
#pragma omp simd
    for (int j = 0; j < last; ++j) {
      const float p = exp_approx(scale * sr[j] - l);
      sr[j] = rnd ? round_bf16(p) : p;
    }
    for (int j = last; j < n; ++j) sr[j] = 0.0f;
  }
}

// dS = softmax backward of dP given P (rows as in softmax_rows), in place in dp.
GTB_CPU_CLONES void softmax_back_rows(const float* __restrict p, float* __restrict dp, std::size_t ld, int i0, int rows,
                                     int n, float scale, bool rnd) {
  for (int r = 0; r < rows; ++r) {
    const float* __restrict pr = p + std::size_t(r) * ld;
    float* __restrict dr = dp + std::size_t(r) * ld;
    const int last = std::min(n, i0 + r + 1);
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int j = 0; j < last; ++j) dot += pr[j] * dr[j];
#pragma omp simd
    for (int j = 0; j < last; ++j) {
      const float v = softmax_backward(pr[j], dr[j], dot, scale);
      dr[j] = rnd ? round_bf16(v) : v;
    }
    for (int j = last; j < n; ++j) dr[j] = 0.0f;
  }
}

GTB_CPU_CLONES void adamw_range(float* __restrict w, float* __restrict m, float* __restrict v,
                               const float* __restrict g, std::size_t n, float lr, float b1, float b2, float eps,
                               float wd, float c1, float c2) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    adamw(w[i], m[i], v[i], g[i], lr, b1, b2, eps, wd, c1, c2);
    m[i] = mlp::flush_denormal(m[i]);
    v[i] = mlp::flush_denormal(v[i]);
  }
}

// A strided block (rows x cols, leading dimension ld) rounded to BF16 or set to zero.
void round_block(float* p, int rows, int cols, std::size_t ld) {
  for (int r = 0; r < rows; ++r) round_range(p + std::size_t(r) * ld, std::size_t(cols));
}
void zero_block(float* p, int rows, int cols, std::size_t ld) {
  for (int r = 0; r < rows; ++r) std::fill(p + std::size_t(r) * ld, p + std::size_t(r) * ld + cols, 0.0f);
}

double wtime() { return omp_get_wtime(); }
// A stopwatch over a pass's pieces: each lap adds the time since the previous one (or the start)
// into its piece's bucket.
struct Laps {
  double t0 = wtime();
  void operator()(double& bucket) {
    const double t1 = wtime();
    bucket += t1 - t0;
    t0 = t1;
  }
};

}  // namespace

struct CpuBlocks::Layer {
  const float* xin = nullptr;  // the block's input (the caller's x for layer 0)
  float *h1, *mean1, *rstd1, *qkv, *att, *o, *x1, *h2, *mean2, *rstd2, *u, *gl, *xout;
};

int CpuBlocks::threads() { return omp_get_max_threads(); }

CpuBlocks::CpuBlocks(const Config& c, Attention attn, Precision precision, std::size_t cap_bytes)
    : cfg_(c), lay_(c), attn_(attn), prec_(precision), alloc_(cap_bytes) {
  cfg_.validate();
  if (prec_ != Precision::fp32 && prec_ != Precision::bf16)
    throw std::invalid_argument(std::string("transformer CPU step: precision ") + gtb::to_string(prec_) +
                                " is not one of fp32, bf16");
  cpu::set_blas_threads(1);  // every GEMM is one single-threaded call per OpenMP thread
  const std::size_t T = std::size_t(cfg_.tokens()), D = std::size_t(cfg_.d_model), F = std::size_t(cfg_.ffn());
  const std::size_t S = std::size_t(cfg_.seq_len), BH = std::size_t(cfg_.batch) * std::size_t(cfg_.heads);
  const int nt = omp_get_max_threads();
  params_ = alloc_.floats(lay_.total);
  grads_ = alloc_.floats(lay_.total);
  m_ = alloc_.floats(lay_.total);
  v_ = alloc_.floats(lay_.total);
  if (bf16()) w16_ = alloc_.floats(lay_.total);
  for (int l = 0; l < cfg_.layers; ++l) {
    Layer L;
    L.h1 = alloc_.floats(T * D);
    L.mean1 = alloc_.floats(T);
    L.rstd1 = alloc_.floats(T);
    L.qkv = alloc_.floats(T * 3 * D);
    L.att = alloc_.floats(attn_ == Attention::materialised ? BH * S * S : BH * S);
    L.o = alloc_.floats(T * D);
    L.x1 = alloc_.floats(T * D);
    L.h2 = alloc_.floats(T * D);
    L.mean2 = alloc_.floats(T);
    L.rstd2 = alloc_.floats(T);
    L.u = alloc_.floats(T * F);
    L.gl = alloc_.floats(T * F);
    L.xout = alloc_.floats(T * D);
    layers_.push_back(L);
  }
  for (int l = 1; l < cfg_.layers; ++l) layers_[std::size_t(l)].xin = layers_[std::size_t(l - 1)].xout;
  y_ = layers_.back().xout;
  dx_ = alloc_.floats(T * D);
  dx1_ = alloc_.floats(T * D);
  tmp_ = alloc_.floats(T * D);
  dff_ = alloc_.floats(T * F);
  dqkv_ = alloc_.floats(T * 3 * D);
  dobuf_ = alloc_.floats(T * D);
  const std::size_t br = std::size_t(std::min(kFusedBlock, cfg_.seq_len));
  scratch_per_thread_ = attn_ == Attention::materialised ? S * S : 2 * br * S;
  attn_scratch_ = alloc_.floats(scratch_per_thread_ * std::size_t(nt));
  partials_ = alloc_.floats(std::size_t(nt) * 4 * F);
  const std::vector<float> p = init_params(cfg_, lay_);
  std::copy(p.begin(), p.end(), params_);

  // The step's GEMM sites and their shapes.
  const int t = int(T), d = int(D), f = int(F), s = int(S), dh = cfg_.head_dim();
  const int B = int(br);
  const bool mat = attn_ == Attention::materialised;
  using cpu_gemm::Shape;
  std::vector<Shape> shapes(s_count);
  shapes[s_qkv] = {"qkv", false, false, t, 3 * d, d, d, 3 * d, 3 * d, false};
  shapes[s_o] = {"out_proj", false, false, t, d, d, d, d, d, false};
  shapes[s_w1] = {"mlp_1", false, false, t, f, d, d, f, f, false};
  shapes[s_w2] = {"mlp_2", false, false, t, d, f, f, d, d, false};
  shapes[s_dw2] = {"mlp_2.dW", true, false, f, d, t, f, d, d, false};
  shapes[s_dg] = {"mlp_2.dX", false, true, t, f, d, d, d, f, false};
  shapes[s_dw1] = {"mlp_1.dW", true, false, d, f, t, d, f, f, false};
  shapes[s_dh2] = {"mlp_1.dX", false, true, t, d, f, f, f, d, false};
  shapes[s_dwo] = {"out_proj.dW", true, false, d, d, t, d, d, d, false};
  shapes[s_do] = {"out_proj.dX", false, true, t, d, d, d, d, d, false};
  shapes[s_dwqkv] = {"qkv.dW", true, false, d, 3 * d, t, d, 3 * d, 3 * d, false};
  shapes[s_dh1] = {"qkv.dX", false, true, t, d, 3 * d, 3 * d, 3 * d, d, false};
  shapes[s_scores] = {"attn.scores", false, true, mat ? s : B, s, dh, 3 * d, 3 * d, s, true};
  shapes[s_pv] = {"attn.pv", false, false, mat ? s : B, dh, s, s, 3 * d, d, true};
  shapes[s_dv] = {"attn.dV", true, false, s, dh, mat ? s : B, s, d, 3 * d, true};
  shapes[s_dp] = {"attn.dP", false, true, mat ? s : B, s, dh, d, 3 * d, s, true};
  shapes[s_dq] = {"attn.dQ", false, false, mat ? s : B, dh, s, s, 3 * d, 3 * d, true};
  shapes[s_dk] = {"attn.dK", true, false, s, dh, mat ? s : B, s, 3 * d, 3 * d, true};
  plan_.choose(shapes, bf16());
}

CpuBlocks::~CpuBlocks() = default;

void CpuBlocks::set_params(const std::vector<float>& p) {
  if (p.size() != lay_.total) throw std::invalid_argument("CpuBlocks::set_params: wrong size");
  std::copy(p.begin(), p.end(), params_);
}
void CpuBlocks::reset_optimizer() {
  std::fill(m_, m_ + lay_.total, 0.0f);
  std::fill(v_, v_ + lay_.total, 0.0f);
  t_ = 0;
}

void CpuBlocks::poison() {
  const std::size_t T = std::size_t(cfg_.tokens()), D = std::size_t(cfg_.d_model), F = std::size_t(cfg_.ffn());
  const std::size_t S = std::size_t(cfg_.seq_len), BH = std::size_t(cfg_.batch) * std::size_t(cfg_.heads);
  for (Layer& L : layers_) {
    for (float* p : {L.h1, L.o, L.x1, L.h2, L.xout}) gtb::poison(p, T * D);
    for (float* p : {L.mean1, L.rstd1, L.mean2, L.rstd2}) gtb::poison(p, T);
    gtb::poison(L.qkv, T * 3 * D);
    gtb::poison(L.u, T * F);
    gtb::poison(L.gl, T * F);
    gtb::poison(L.att, attn_ == Attention::materialised ? BH * S * S : BH * S);
  }
  for (float* p : {dx_, dx1_, tmp_, dobuf_}) gtb::poison(p, T * D);
  gtb::poison(dff_, T * F);
  gtb::poison(dqkv_, T * 3 * D);
  for (int l = 0; l < cfg_.layers; ++l)
    for (int k = 0; k < Layout::kCount; ++k) {
      gtb::poison(grads_ + lay_.at(l, P(k)), lay_.n(P(k)));
      if (w16_) gtb::poison(w16_ + lay_.at(l, P(k)), lay_.n(P(k)));
    }
}

void CpuBlocks::attention_forward(Layer& L) {
  const int S = cfg_.seq_len, H = cfg_.heads, dh = cfg_.head_dim(), D = cfg_.d_model;
  const int tasks = cfg_.batch * H;
  const float scale = 1.0f / std::sqrt(float(dh));
  const bool mat = attn_ == Attention::materialised, rnd = bf16();
  const int br = std::min(kFusedBlock, S);
#pragma omp parallel for schedule(static)
  for (int task = 0; task < tasks; ++task) {
    const int b = task / H, h = task % H;
    const float* q = L.qkv + std::size_t(b) * S * 3 * D + std::size_t(h) * dh;
    const float* k = q + D;
    const float* v = q + 2 * D;
    float* o = L.o + std::size_t(b) * S * D + std::size_t(h) * dh;
    if (mat) {
      float* p = L.att + std::size_t(task) * S * S;
      plan_.run(s_scores, q, k, 0.0f, p);
      softmax_rows(p, std::size_t(S), 0, S, S, scale, nullptr, rnd);
      plan_.run(s_pv, p, v, 0.0f, o);
    } else {
      float* sb = attn_scratch_ + scratch_per_thread_ * std::size_t(omp_get_thread_num());
      float* lse = L.att + std::size_t(task) * S;
      for (int i0 = 0; i0 < S; i0 += br) {
        const int rows = std::min(br, S - i0), n = i0 + rows;
        plan_.run_sized(s_scores, rows, n, dh, q + std::size_t(i0) * 3 * D, k, 0.0f, sb);
        softmax_rows(sb, std::size_t(S), i0, rows, n, scale, lse + i0, rnd);
        plan_.run_sized(s_pv, rows, dh, n, sb, v, 0.0f, o + std::size_t(i0) * D);
      }
    }
    if (rnd) round_block(o, S, dh, std::size_t(D));
  }
}

void CpuBlocks::attention_backward(Layer& L, const float* dout_c, float* dqkv) {
  const int S = cfg_.seq_len, H = cfg_.heads, dh = cfg_.head_dim(), D = cfg_.d_model;
  const int tasks = cfg_.batch * H;
  const float scale = 1.0f / std::sqrt(float(dh));
  const bool mat = attn_ == Attention::materialised, rnd = bf16();
  const int br = std::min(kFusedBlock, S);
  float* dout = const_cast<float*>(dout_c);
#pragma omp parallel for schedule(static)
  for (int task = 0; task < tasks; ++task) {
    const int b = task / H, h = task % H;
    const std::size_t qo = std::size_t(b) * S * 3 * D + std::size_t(h) * dh;
    const float* q = L.qkv + qo;
    const float* k = q + D;
    const float* v = q + 2 * D;
    float* dq = dqkv + qo;
    float* dk = dq + D;
    float* dv = dq + 2 * D;
    float* go = dout + std::size_t(b) * S * D + std::size_t(h) * dh;
    if (rnd) round_block(go, S, dh, std::size_t(D));  // this head's slice only: tasks never share one
    float* scratch = attn_scratch_ + scratch_per_thread_ * std::size_t(omp_get_thread_num());
    if (mat) {
      const float* p = L.att + std::size_t(task) * S * S;
      plan_.run(s_dv, p, go, 0.0f, dv);
      plan_.run(s_dp, go, v, 0.0f, scratch);
      softmax_back_rows(p, scratch, std::size_t(S), 0, S, S, scale, rnd);
      plan_.run(s_dq, scratch, k, 0.0f, dq);
      plan_.run(s_dk, scratch, q, 0.0f, dk);
    } else {
      const float* lse = L.att + std::size_t(task) * S;
      float* pb = scratch;
      float* dpb = scratch + std::size_t(br) * S;
      zero_block(dk, S, dh, std::size_t(3 * D));
      zero_block(dv, S, dh, std::size_t(3 * D));
      for (int i0 = 0; i0 < S; i0 += br) {
        const int rows = std::min(br, S - i0), n = i0 + rows;
        plan_.run_sized(s_scores, rows, n, dh, q + std::size_t(i0) * 3 * D, k, 0.0f, pb);
        softmax_from_lse(pb, std::size_t(S), i0, rows, n, scale, lse + i0, rnd);
        plan_.run_sized(s_dp, rows, n, dh, go + std::size_t(i0) * D, v, 0.0f, dpb);
        plan_.run_sized(s_dv, n, dh, rows, pb, go + std::size_t(i0) * D, 1.0f, dv);
        softmax_back_rows(pb, dpb, std::size_t(S), i0, rows, n, scale, rnd);
        plan_.run_sized(s_dq, rows, dh, n, dpb, k, 0.0f, dq + std::size_t(i0) * 3 * D);
        plan_.run_sized(s_dk, n, dh, rows, dpb, q + std::size_t(i0) * 3 * D, 1.0f, dk);
      }
    }
  }
}

void CpuBlocks::forward(const float* x, const float* target, double& loss) {
  const std::size_t T = std::size_t(cfg_.tokens()), D = std::size_t(cfg_.d_model), F = std::size_t(cfg_.ffn());
  const bool rnd = bf16();
  const double work = double(T) * double(D);
  Laps lap;
  layers_[0].xin = x;
  {
    Layer& L = layers_[0];
    par_rows(T, work, [&](std::size_t r0, std::size_t r1, int) {
      ln_rows(L.xin, L.h1, L.mean1, L.rstd1, master(0, P::ln1_g), master(0, P::ln1_b), r0, r1, D, cfg_.ln_eps, rnd);
    });
  }
  lap(pieces_.elementwise);
  const int nt = omp_get_max_threads();
  std::vector<double> tloss(std::size_t(nt), 0.0);
  for (int l = 0; l < cfg_.layers; ++l) {
    Layer& L = layers_[std::size_t(l)];
    plan_.run(s_qkv, L.h1, w(l, P::w_qkv), 0.0f, L.qkv);
    lap(pieces_.projections);
    par_rows(T, work * 3, [&](std::size_t r0, std::size_t r1, int) {
      bias_rows(L.qkv, master(l, P::b_qkv), r0, r1, 3 * D, rnd);
    });
    lap(pieces_.elementwise);
    attention_forward(L);
    lap(pieces_.attention);
    plan_.run(s_o, L.o, w(l, P::w_o), 0.0f, tmp_);
    lap(pieces_.projections);
    par_rows(T, work * 2, [&](std::size_t r0, std::size_t r1, int) {
      residual_rows(L.xin, tmp_, master(l, P::b_o), L.x1, r0, r1, D);
      ln_rows(L.x1, L.h2, L.mean2, L.rstd2, master(l, P::ln2_g), master(l, P::ln2_b), r0, r1, D, cfg_.ln_eps, rnd);
    });
    lap(pieces_.elementwise);
    plan_.run(s_w1, L.h2, w(l, P::w_1), 0.0f, L.u);
    lap(pieces_.mlp);
    par_rows(T, work * 16, [&](std::size_t r0, std::size_t r1, int) {
      bias_gelu_rows(L.u, L.gl, master(l, P::b_1), r0, r1, F, rnd);
    });
    lap(pieces_.elementwise);
    plan_.run(s_w2, L.gl, w(l, P::w_2), 0.0f, tmp_);
    lap(pieces_.mlp);
    const bool last = l + 1 == cfg_.layers;
    par_rows(T, work * 2, [&](std::size_t r0, std::size_t r1, int t) {
      residual_rows(L.x1, tmp_, master(l, P::b_2), L.xout, r0, r1, D);
      if (!last) {
        Layer& N = layers_[std::size_t(l + 1)];
        ln_rows(N.xin, N.h1, N.mean1, N.rstd1, master(l + 1, P::ln1_g), master(l + 1, P::ln1_b), r0, r1, D,
                cfg_.ln_eps, rnd);
        return;
      }
      // The loss 0.5 * mean (y - target)^2 and its gradient dL/dy.
      const float inv = 1.0f / float(double(T) * double(D));
      double s = 0;
      for (std::size_t r = r0; r < r1; ++r) {
        float part = 0;
        const float* yr = L.xout + r * D;
        const float* tr = target + r * D;
        float* dr = dx_ + r * D;
#pragma omp simd reduction(+ : part)
        for (std::size_t j = 0; j < D; ++j) {
          const float e = yr[j] - tr[j];
          part += e * e;
          dr[j] = e * inv;
        }
        s += double(part);
      }
      tloss[std::size_t(t)] += s;
    });
    lap(pieces_.elementwise);
  }
  double s = 0;
  for (double v : tloss) s += v;
  loss = 0.5 * s / (double(T) * double(D));
}

void CpuBlocks::backward(const float* x) {
  (void)x;
  const std::size_t T = std::size_t(cfg_.tokens()), D = std::size_t(cfg_.d_model), F = std::size_t(cfg_.ffn());
  const bool rnd = bf16();
  const int nt = omp_get_max_threads();
  const double work = double(T) * double(D);
  Laps lap;
  // Per-thread column sums: each thread owns 4F floats; reduced into the gradient after the pass.
  auto clear_parts = [&](std::size_t n) {
    for (int t = 0; t < nt; ++t) std::fill(partials_ + std::size_t(t) * 4 * F, partials_ + std::size_t(t) * 4 * F + n, 0.0f);
  };
  auto reduce_parts = [&](std::size_t off, std::size_t n, float* out) {
    for (std::size_t j = 0; j < n; ++j) {
      float s = 0;
      for (int t = 0; t < nt; ++t) s += partials_[std::size_t(t) * 4 * F + off + j];
      out[j] = s;
    }
  };
  auto part = [&](int t) { return partials_ + std::size_t(t) * 4 * F; };
  // A pass over the rows whose threads sum columns into their parts (`cols` floats each), then each
  // (offset, count, gradient) of `into` reduced over the threads.
  auto summed_pass = [&](std::size_t cols, double cost, const auto& pass,
                         std::initializer_list<std::tuple<std::size_t, std::size_t, float*>> into) {
    clear_parts(cols);
    par_rows(T, cost, pass);
    for (const auto& [off, n, out] : into) reduce_parts(off, n, out);
  };
  // A linear layer's two backward GEMMs through the plan: its weight gradient dW = A^T dY and the
  // gradient of its input dX = dY W^T.
  auto linear_backward = [&](int l, P which, Site s_dw, Site s_dx, const float* a, const float* dy,
                             float* dx) {
    plan_.run(s_dw, a, dy, 0.0f, g(l, which));
    plan_.run(s_dx, dy, w(l, which), 0.0f, dx);
  };
  float* dr = dobuf_;  // BF16 copies of the residual gradient for the GEMMs (dobuf_ is free until out_proj.dX)
  // A LayerNorm's backward from tmp_ (its output's gradient): dx = dres + its input's gradient, gamma
  // and beta gradients summed; with `bias`, dx's column sums too (that bias's gradient), and dx's
  // BF16 copy into dr when the step runs BF16.
  auto layer_norm_backward = [&](int l, const float* in, const float* mean, const float* rstd, P gamma, P beta,
                                 const float* dres, float* dx, std::optional<P> bias) {
    const std::size_t parts = bias ? 3 : 2;
    summed_pass(
        parts * D, work * double(parts),
        [&](std::size_t r0, std::size_t r1, int t) {
          ln_back_rows(tmp_, in, mean, rstd, master(l, gamma), dres, dx, part(t), r0, r1, D);
          if (bias) colsum_rows(dx, part(t) + 2 * D, rnd ? dr : nullptr, r0, r1, D);
        },
        {{0, D, g(l, gamma)}, {D, D, g(l, beta)}});
    if (bias) reduce_parts(2 * D, D, g(l, *bias));
  };
  for (int l = cfg_.layers - 1; l >= 0; --l) {
    Layer& L = layers_[std::size_t(l)];
    // MLP: out = x1 + W2 gelu(W1 LN2(x1) + b1) + b2; dx_ = dL/dout.
    summed_pass(
        D, work, [&](std::size_t r0, std::size_t r1, int t) { colsum_rows(dx_, part(t), rnd ? dr : nullptr, r0, r1, D); },
        {{0, D, g(l, P::b_2)}});
    const float* dxg = rnd ? dr : dx_;
    lap(pieces_.elementwise);
    linear_backward(l, P::w_2, s_dw2, s_dg, L.gl, dxg, dff_);
    lap(pieces_.mlp);
    summed_pass(
        F, work * 16, [&](std::size_t r0, std::size_t r1, int t) { gelu_back_rows(dff_, L.u, part(t), r0, r1, F, rnd); },
        {{0, F, g(l, P::b_1)}});
    lap(pieces_.elementwise);
    linear_backward(l, P::w_1, s_dw1, s_dh2, L.h2, dff_, tmp_);
    lap(pieces_.mlp);
    // LN2 backward into dx1 = dL/dx1, then the output projection's bias sum (and BF16 copy).
    layer_norm_backward(l, L.x1, L.mean2, L.rstd2, P::ln2_g, P::ln2_b, dx_, dx1_, P::b_o);
    const float* dx1g = rnd ? dr : dx1_;
    lap(pieces_.elementwise);
    // dr is read by both GEMMs of out_proj; the second writes elsewhere, so dobuf_ is reused after.
    linear_backward(l, P::w_o, s_dwo, s_do, L.o, dx1g, rnd ? tmp_ : dobuf_);
    lap(pieces_.projections);
    attention_backward(L, rnd ? tmp_ : dobuf_, dqkv_);
    lap(pieces_.attention);
    summed_pass(
        3 * D, work * 3,
        [&](std::size_t r0, std::size_t r1, int t) {
          for (std::size_t r = r0; r < r1; ++r) {
            colsum_rows(dqkv_, part(t), nullptr, r, r + 1, 3 * D);
            if (rnd) round_range(dqkv_ + r * 3 * D, 3 * D);
          }
        },
        {{0, 3 * D, g(l, P::b_qkv)}});
    lap(pieces_.elementwise);
    linear_backward(l, P::w_qkv, s_dwqkv, s_dh1, L.h1, dqkv_, tmp_);
    lap(pieces_.projections);
    layer_norm_backward(l, L.xin, L.mean1, L.rstd1, P::ln1_g, P::ln1_b, dx1_, dx_, std::nullopt);
    lap(pieces_.elementwise);
  }
}

void CpuBlocks::optimizer_step() {
  const double t0 = wtime();
  ++t_;
  float c1, c2;
  mlp::adam_corrections(t_, cfg_.beta1, cfg_.beta2, c1, c2);
  const std::size_t n = lay_.total;
  par_rows(n / 16, double(n) * 4, [&](std::size_t b, std::size_t e, int) {
    const std::size_t i0 = b * 16, i1 = e == n / 16 ? n : e * 16;
    adamw_range(params_ + i0, m_ + i0, v_ + i0, grads_ + i0, i1 - i0, cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps,
                cfg_.weight_decay, c1, c2);
  });
  pieces_.optimizer += wtime() - t0;
}

float CpuBlocks::step(const float* x, const float* target) {
  if (!x || !target) throw std::invalid_argument("CpuBlocks::step: no input or target");
  if (bf16()) {
    // Autocast's weight cast: BF16 copies of the FP32 master weights for the GEMMs.
    const double t0 = wtime();
    const std::size_t n = lay_.total;
    par_rows(n / 16, double(n), [&](std::size_t b, std::size_t e, int) {
      const std::size_t i0 = b * 16, i1 = e == n / 16 ? n : e * 16;
      round_copy(params_ + i0, w16_ + i0, i1 - i0);
    });
    pieces_.elementwise += wtime() - t0;
  }
  double loss = 0;
  forward(x, target, loss);
  backward(x);
  optimizer_step();
  ++pieces_.steps;
  return float(loss);
}

}  // namespace gtb::xfmr
