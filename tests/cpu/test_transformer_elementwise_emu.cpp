// The GPU transformer step's own elementwise kernels (elementwise.cu: layer norm forward and backward,
// causal softmax, bias + GELU, AdamW), their code run on CPU threads through the host stand-in of
// tests/cpu/cuda_emu, each against float64 written out here from block.h's math; a planted indexing
// error (the grid's last block run as block 0) must fail every check. 13 rows: a partial last group
// of the row kernels' 4 rows per block; 13 x 300 elements: a partial last block of 256.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in.
#include "kernels/transformer/cuda/elementwise.cu"

#include "tests/cpu/emu_check.h"

namespace {
namespace gx = gtb::cuda::xfmr;
namespace xf = gtb::xfmr;

using namespace gtb_emu_check;

constexpr int kRows = 13, kD = 300;
constexpr std::size_t kN = std::size_t(kRows) * kD;

// Each row's mean and reciprocal standard deviation in float64.
void row_stats(const vec& x, dvec& mean, dvec& rstd, double eps) {
  mean.assign(kRows, 0.0), rstd.assign(kRows, 0.0);
  for (int r = 0; r < kRows; ++r) {
    double mu = 0, var = 0;
    for (int j = 0; j < kD; ++j) mu += x[std::size_t(r) * kD + j];
    mu /= kD;
    for (int j = 0; j < kD; ++j) var += (x[std::size_t(r) * kD + j] - mu) * (x[std::size_t(r) * kD + j] - mu);
    mean[std::size_t(r)] = mu, rstd[std::size_t(r)] = xf::ln_rstd(var / kD, eps);
  }
}

TEST(TransformerElementwiseEmulated, LayerNormForward) {
  const vec x = rnd(kN, 1), g = rnd(kD, 2, 0.5f, 1.5f), b = rnd(kD, 3);
  const float eps = 1e-5f;
  with_plant([&] {
    vec y = poisoned(kN), mean = poisoned(kRows), rstd = poisoned(kRows);
    gx::layer_norm_forward(x.data(), y.data(), mean.data(), rstd.data(), g.data(), b.data(), kRows, kD, eps, nullptr);
    dvec rm, rr, ry(kN);
    row_stats(x, rm, rr, eps);
    for (std::size_t i = 0; i < kN; ++i)
      ry[i] = xf::ln_forward(double(x[i]), rm[i / kD], rr[i / kD], double(g[i % kD]), double(b[i % kD]));
    return close(y, ry, 1e-4, 1e-5) && close(mean, rm, 1e-4, 1e-6) && close(rstd, rr, 1e-4, 1e-6);
  });
}

TEST(TransformerElementwiseEmulated, LayerNormBackward) {
  const vec x = rnd(kN, 4), g = rnd(kD, 5, 0.5f, 1.5f), dy = rnd(kN, 6), dres = rnd(kN, 7);
  dvec rm, rr;
  row_stats(x, rm, rr, 1e-5);
  const vec mean(rm.begin(), rm.end()), rstd(rr.begin(), rr.end());
  with_plant([&] {
    vec dx = poisoned(kN), dg(kD, 0.25f), db(kD, -0.25f);  // the parameter gradients accumulate
    gx::layer_norm_backward(dy.data(), x.data(), mean.data(), rstd.data(), g.data(), dres.data(), dx.data(), dg.data(),
                            db.data(), kRows, kD, nullptr);
    dvec rdx(kN), rdg(kD, 0.25), rdb(kD, -0.25);
    for (int r = 0; r < kRows; ++r) {
      const std::size_t o = std::size_t(r) * kD;
      double s1 = 0, s2 = 0;
      for (int j = 0; j < kD; ++j) {
        const double xh = (x[o + j] - double(mean[std::size_t(r)])) * rstd[std::size_t(r)];
        const double dxh = double(dy[o + j]) * g[j];
        s1 += dxh, s2 += dxh * xh;
        rdg[std::size_t(j)] += double(dy[o + j]) * xh;
        rdb[std::size_t(j)] += dy[o + j];
      }
      s1 /= kD, s2 /= kD;
      for (int j = 0; j < kD; ++j) {
        const double xh = (x[o + j] - double(mean[std::size_t(r)])) * rstd[std::size_t(r)];
        rdx[o + j] = dres[o + j] + xf::ln_backward(double(dy[o + j]) * g[j], xh, double(rstd[std::size_t(r)]), s1, s2);
      }
    }
    return close(dx, rdx, 1e-4, 1e-5) && close(dg, rdg, 1e-4, 1e-5) && close(db, rdb, 1e-4, 1e-5);
  });
}

TEST(TransformerElementwiseEmulated, CausalSoftmax) {
  const int count = 3, seq = 37;  // 111 rows: a partial group of 4
  const std::size_t n = std::size_t(count) * seq * seq;
  const float scale = 0.2f;
  const vec s0 = rnd(n, 8, -5.0f, 5.0f);
  with_plant([&] {
    vec s = s0;
    gx::causal_softmax(s.data(), count, seq, scale, nullptr);
    dvec ref(n, 0.0);
    for (std::size_t r = 0; r < std::size_t(count) * seq; ++r) {
      const int i = int(r % std::size_t(seq));
      double mx = -1e300, sum = 0;
      for (int j = 0; j <= i; ++j) mx = std::fmax(mx, double(scale) * s0[r * seq + j]);
      for (int j = 0; j <= i; ++j) sum += std::exp(double(scale) * s0[r * seq + j] - mx);
      for (int j = 0; j <= i; ++j)
        ref[r * seq + j] = xf::softmax_p(double(s0[r * seq + j]), double(scale), mx, 1.0 / sum);
    }
    return close(s, ref, 1e-5, 1e-7);
  });
}

TEST(TransformerElementwiseEmulated, BiasGelu) {
  const vec u0 = rnd(kN, 9, -4.0f, 4.0f), b = rnd(kD, 10);
  with_plant([&] {
    vec u = u0, g = poisoned(kN);
    gx::bias_gelu(u.data(), g.data(), b.data(), kRows, kD, nullptr);
    dvec ru(kN), rg(kN);
    for (std::size_t i = 0; i < kN; ++i) ru[i] = double(u0[i]) + b[i % kD], rg[i] = xf::gelu(double(float(ru[i])));
    return close(u, ru) && close(g, rg, 1e-5, 1e-6);
  });
}

TEST(TransformerElementwiseEmulated, Adamw) {
  const vec w0 = rnd(kN, 11), m0 = rnd(kN, 12, -0.1f, 0.1f), v0 = rnd(kN, 13, 0.0f, 0.01f), g = rnd(kN, 14);
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
  float c1, c2;
  gtb::mlp::adam_corrections(3, b1, b2, c1, c2);
  with_plant([&] {
    vec w = w0, m = m0, v = v0;
    gx::adamw(w.data(), m.data(), v.data(), g.data(), (long long)kN, lr, b1, b2, eps, wd, c1, c2, nullptr);
    dvec rw(kN), rm(kN), rv(kN);
    for (std::size_t i = 0; i < kN; ++i) {
      double wi = w0[i], mi = m0[i], vi = v0[i];
      xf::adamw(wi, mi, vi, double(g[i]), double(lr), double(b1), double(b2), double(eps), double(wd), double(c1),
                double(c2));
      rw[i] = wi, rm[i] = mi, rv[i] = vi;
    }
    // m and v: float rounding of terms up to 0.2 and 4e-3 where they cancel.
    return close(w, rw, 1e-5, 1e-7) && close(m, rm, 1e-5, 1e-7) && close(v, rv, 1e-5, 1e-9);
  });
}

}  // namespace
