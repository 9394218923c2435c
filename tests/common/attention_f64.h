// A float64 causal multi-head attention (forward, log-sum-exp and backward) in the CPU step's
// layouts, and the check of a float result against it: what the fused attention kernels' tests
// compare with. Written out plainly, one row at a time, so that it is obviously the textbook math.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/verify.h"
#include "kernels/transformer/block.h"

namespace gtb::test {

// qkv: tokens x 3d, query of head h at columns h*dh, key at d + h*dh, value at 2d + h*dh;
// o, dout: tokens x d; lse: (b * heads + h) * seq + i.
struct AttnShape {
  int batch = 1, seq = 1, heads = 1, head_dim = 32;
  int d() const { return heads * head_dim; }
  std::size_t tokens() const { return std::size_t(batch) * std::size_t(seq); }
  std::size_t qkv_size() const { return tokens() * 3 * std::size_t(d()); }
  std::size_t o_size() const { return tokens() * std::size_t(d()); }
  std::size_t lse_size() const { return std::size_t(batch) * std::size_t(heads) * std::size_t(seq); }
  std::string name() const {
    return "batch " + std::to_string(batch) + " seq " + std::to_string(seq) + " heads " + std::to_string(heads) +
           " head_dim " + std::to_string(head_dim);
  }
};

struct AttnF64 {
  std::vector<double> o, lse, dqkv;
};

// causal = false attends to every key: the planted wrong reference of the tests. T is float for the
// kernels' inputs, double for finite differences.
template <class T>
AttnF64 attention_f64(const AttnShape& s, const std::vector<T>& qkv, const std::vector<T>& dout, bool causal = true) {
  const int S = s.seq, dh = s.head_dim, D = s.d();
  const std::size_t ld = 3 * std::size_t(D);
  const double scale = 1.0 / std::sqrt(double(dh));
  AttnF64 r;
  r.o.assign(s.o_size(), 0.0);
  r.lse.assign(s.lse_size(), 0.0);
  r.dqkv.assign(s.qkv_size(), 0.0);
  std::vector<double> p(static_cast<std::size_t>(S)), dp(static_cast<std::size_t>(S));
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h) {
      auto q = [&](int i, int c) { return double(qkv[(std::size_t(b) * S + i) * ld + std::size_t(h) * dh + c]); };
      auto k = [&](int j, int c) { return double(qkv[(std::size_t(b) * S + j) * ld + D + std::size_t(h) * dh + c]); };
      auto v = [&](int j, int c) {
        return double(qkv[(std::size_t(b) * S + j) * ld + 2 * std::size_t(D) + std::size_t(h) * dh + c]);
      };
      auto g = [&](int i, int c) { return double(dout[(std::size_t(b) * S + i) * D + std::size_t(h) * dh + c]); };
      auto dq = [&](int i, int c) -> double& { return r.dqkv[(std::size_t(b) * S + i) * ld + std::size_t(h) * dh + c]; };
      auto dk = [&](int j, int c) -> double& {
        return r.dqkv[(std::size_t(b) * S + j) * ld + D + std::size_t(h) * dh + c];
      };
      auto dv = [&](int j, int c) -> double& {
        return r.dqkv[(std::size_t(b) * S + j) * ld + 2 * std::size_t(D) + std::size_t(h) * dh + c];
      };
      for (int i = 0; i < S; ++i) {
        const int last = causal ? i : S - 1;
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j <= last; ++j) {
          double dot = 0;
          for (int c = 0; c < dh; ++c) dot += q(i, c) * k(j, c);
          p[std::size_t(j)] = scale * dot;
          mx = std::max(mx, p[std::size_t(j)]);
        }
        double sum = 0;
        for (int j = 0; j <= last; ++j) sum += std::exp(p[std::size_t(j)] - mx);
        r.lse[(std::size_t(b) * s.heads + h) * S + i] = mx + std::log(sum);
        for (int j = 0; j <= last; ++j) p[std::size_t(j)] = std::exp(p[std::size_t(j)] - mx) / sum;
        for (int c = 0; c < dh; ++c) {
          double acc = 0;
          for (int j = 0; j <= last; ++j) acc += p[std::size_t(j)] * v(j, c);
          r.o[(std::size_t(b) * S + i) * D + std::size_t(h) * dh + c] = acc;
        }
        // Backward of o_i = sum_j p_ij v_j with p_i = softmax(scale * q_i . k_j).
        double row_dot = 0;
        for (int j = 0; j <= last; ++j) {
          double d = 0;
          for (int c = 0; c < dh; ++c) d += g(i, c) * v(j, c);
          dp[std::size_t(j)] = d;
          row_dot += p[std::size_t(j)] * d;
        }
        for (int j = 0; j <= last; ++j) {
          const double ds = xfmr::softmax_backward(p[std::size_t(j)], dp[std::size_t(j)], row_dot, scale);
          for (int c = 0; c < dh; ++c) {
            dv(j, c) += p[std::size_t(j)] * g(i, c);
            dq(i, c) += ds * k(j, c);
            dk(j, c) += ds * q(i, c);
          }
        }
      }
    }
  return r;
}

// The FP32 kernels' bound: each output is a sum of at most seq products of dot products of head_dim
// terms, accumulated in FP32 (unit roundoff 6e-8); 1e-4 of the tensor's largest magnitude, plus 1e-4
// of the element's, leaves room for a few hundred roundings and is 1000x below any wrong mask.
inline constexpr double kAttnTol = 1e-4;

// got within tol * (max |ref| + |ref_i|) of ref everywhere and finite: poisoned (NaN) elements that
// a kernel never wrote fail, and near-zero elements are judged on the tensor's scale.
inline ErrorReport check_attention_tensor(const float* got, const std::vector<double>& ref, double tol = kAttnTol) {
  double scale = 0;
  for (double x : ref) scale = std::max(scale, std::fabs(x));
  return compare_elementwise(got, ref.data(), ref.size(), tol, tol * std::max(scale, 1e-30));
}

// The fused kernels' three outputs against the causal float64 reference of the same inputs.
struct AttnCheck {
  bool ok = true;        // o, lse and dqkv all within tolerance
  std::string detail;    // what failed: "o: ...; dqkv: ..."
  bool sees_mask = true;  // o does not also pass against the non-causal reference (seq 1 has no mask)
};
inline AttnCheck check_attention(const AttnShape& s, const std::vector<float>& qkv, const std::vector<float>& dout,
                                 const float* o, const float* lse, const float* dqkv) {
  const AttnF64 ref = attention_f64(s, qkv, dout);
  AttnCheck c;
  auto one = [&c](const char* name, const float* got, const std::vector<double>& want) {
    const ErrorReport e = check_attention_tensor(got, want);
    if (e.ok) return;
    c.ok = false;
    c.detail += (c.detail.empty() ? "" : "; ") + std::string(name) + ": " + e.detail;
  };
  one("o", o, ref.o);
  one("lse", lse, ref.lse);
  one("dqkv", dqkv, ref.dqkv);
  if (s.seq > 1) c.sees_mask = !check_attention_tensor(o, attention_f64(s, qkv, dout, false).o).ok;
  return c;
}

}  // namespace gtb::test
