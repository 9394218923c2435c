// CPU tests of the float64 attention that the fused attention kernels' GPU tests compare with: its
// gradients against finite differences, its causal mask, and the check failing on a planted wrong
// (non-causal) reference and on an unwritten (poisoned) element.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/common/attention_f64.h"

using gtb::test::AttnShape;
using gtb::test::attention_f64;
using gtb::test::check_attention_tensor;

namespace {
template <class T>
std::vector<T> rnd(std::size_t n, std::uint64_t seed, T a) {
  std::vector<T> v(n);
  gtb::fill_uniform(v.data(), n, seed, -a, a);
  return v;
}
std::vector<float> to_float(const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); }
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

TEST(TransformerAttentionF64, GradientsMatchFiniteDifferences) {
  const AttnShape s{2, 5, 2, 4};
  auto qkv = rnd<double>(s.qkv_size(), 11, 1.5);
  const auto dout = rnd<double>(s.o_size(), 12, 1.0);
  const auto r = attention_f64(s, qkv, dout);
  // L = sum(dout * o): its gradient with respect to qkv is dqkv. Every element of q, k and v.
  const double h = 1e-6;
  for (std::size_t e = 0; e < qkv.size(); ++e) {
    const double x = qkv[e];
    qkv[e] = x + h;
    const double up = dot(attention_f64(s, qkv, dout).o, dout);
    qkv[e] = x - h;
    const double dn = dot(attention_f64(s, qkv, dout).o, dout);
    qkv[e] = x;
    EXPECT_NEAR(r.dqkv[e], (up - dn) / (2 * h), 1e-7) << "qkv element " << e;
  }
}

TEST(TransformerAttentionF64, CausalRowsSeeOnlyThePast) {
  const AttnShape s{1, 6, 2, 8};
  auto qkv = rnd<double>(s.qkv_size(), 13, 2.0);
  const auto dout = rnd<double>(s.o_size(), 14, 1.0);
  const auto before = attention_f64(s, qkv, dout);
  // Changing the last token's key and value leaves every earlier row's output and lse unchanged.
  const int D = s.d(), last = s.seq - 1;
  for (int c = D; c < 3 * D; ++c) qkv[std::size_t(last) * 3 * D + c] += 0.5;
  const auto after = attention_f64(s, qkv, dout);
  for (int i = 0; i < last; ++i)
    for (int c = 0; c < D; ++c) EXPECT_EQ(before.o[std::size_t(i) * D + c], after.o[std::size_t(i) * D + c]);
  // Row 0 attends to key 0 alone: its context is value 0 and its lse the one scaled score.
  for (int h = 0; h < s.heads; ++h) {
    double sc = 0;
    for (int c = 0; c < s.head_dim; ++c) sc += qkv[std::size_t(h) * s.head_dim + c] * qkv[D + h * s.head_dim + c];
    EXPECT_NEAR(before.lse[std::size_t(h) * s.seq], sc / std::sqrt(double(s.head_dim)), 1e-12);
    for (int c = 0; c < s.head_dim; ++c)
      EXPECT_DOUBLE_EQ(before.o[std::size_t(h) * s.head_dim + c], qkv[2 * D + h * s.head_dim + c]);
  }
}

TEST(TransformerAttentionF64, OneTokenCopiesTheValue) {
  const AttnShape s{3, 1, 2, 32};
  const auto qkv = rnd<float>(s.qkv_size(), 15, 1.0f);
  const auto dout = rnd<float>(s.o_size(), 16, 1.0f);
  const auto r = attention_f64(s, qkv, dout);
  const int D = s.d();
  for (int b = 0; b < s.batch; ++b)
    for (int c = 0; c < D; ++c) {
      const std::size_t t = std::size_t(b);
      EXPECT_EQ(r.o[t * D + c], double(qkv[t * 3 * D + 2 * D + c]));
      EXPECT_EQ(r.dqkv[t * 3 * D + c], 0.0);      // one probability of 1: no score gradient
      EXPECT_EQ(r.dqkv[t * 3 * D + D + c], 0.0);
      EXPECT_EQ(r.dqkv[t * 3 * D + 2 * D + c], double(dout[t * D + c]));
    }
}

// The planted wrong case: a result that attended to the future (non-causal) fails the check of o,
// lse and dqkv, while the causal result rounded to float passes it.
TEST(TransformerAttentionF64, CheckFailsOnANonCausalResult) {
  const AttnShape s{2, 37, 3, 32};
  const auto qkv = rnd<float>(s.qkv_size(), 17, 2.5f);
  const auto dout = rnd<float>(s.o_size(), 18, 1.0f);
  const auto causal = attention_f64(s, qkv, dout, true);
  const auto full = attention_f64(s, qkv, dout, false);
  EXPECT_TRUE(check_attention_tensor(to_float(causal.o).data(), causal.o).ok);
  EXPECT_TRUE(check_attention_tensor(to_float(causal.lse).data(), causal.lse).ok);
  EXPECT_TRUE(check_attention_tensor(to_float(causal.dqkv).data(), causal.dqkv).ok);
  EXPECT_FALSE(check_attention_tensor(to_float(full.o).data(), causal.o).ok);
  EXPECT_FALSE(check_attention_tensor(to_float(full.lse).data(), causal.lse).ok);
  EXPECT_FALSE(check_attention_tensor(to_float(full.dqkv).data(), causal.dqkv).ok);
}

TEST(TransformerAttentionF64, CheckFailsOnAnUnwrittenElement) {
  const AttnShape s{1, 9, 1, 32};
  const auto qkv = rnd<float>(s.qkv_size(), 19, 1.0f);
  const auto dout = rnd<float>(s.o_size(), 20, 1.0f);
  const auto r = attention_f64(s, qkv, dout);
  auto got = to_float(r.dqkv);
  gtb::poison(got.data() + 100, 1);
  const auto e = check_attention_tensor(got.data(), r.dqkv);
  EXPECT_FALSE(e.ok);
  EXPECT_EQ(e.first_bad, 100u) << e.detail;
}
