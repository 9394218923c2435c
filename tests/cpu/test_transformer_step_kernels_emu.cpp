// The GPU transformer step's glue and elementwise kernels (step_kernels.cu, elementwise.cu), their own
// code run on CPU threads through the host stand-in of tests/cpu/cuda_emu, each against float64
// written out here from block.h's math; a planted indexing error (the grid's last block run as block
// 0) must fail every check. Shapes leave a partial last block and a partial last group of rows.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in (elementwise.cu is in its
// own test file: the two share names in their anonymous namespaces).
#include "kernels/transformer/cuda/step_kernels.cu"

#include "tests/cpu/emu_check.h"

namespace {
namespace gx = gtb::cuda::xfmr;
namespace xf = gtb::xfmr;

using namespace gtb_emu_check;

constexpr int kRows = 13, kCols = 300;  // 13 rows: a partial group of 4 rows; 3900 elements: a partial block of 256
constexpr std::size_t kN = std::size_t(kRows) * kCols;

TEST(TransformerStepKernelsEmulated, AddBiasAndResidual) {
  const vec y0 = rnd(kN, 1), a = rnd(kN, 2), b = rnd(kCols, 3);
  with_plant([&] {
    vec y = y0;
    gx::add_bias(y.data(), b.data(), kRows, kCols, nullptr);
    dvec ref(kN);
    for (std::size_t i = 0; i < kN; ++i) ref[i] = double(y0[i]) + b[i % kCols];
    return close(y, ref);
  });
  with_plant([&] {
    vec out = poisoned(kN);
    gx::residual_add(out.data(), a.data(), y0.data(), b.data(), kRows, kCols, nullptr);
    dvec ref(kN);
    for (std::size_t i = 0; i < kN; ++i) ref[i] = double(a[i]) + y0[i] + b[i % kCols];
    return close(out, ref);
  });
}

TEST(TransformerStepKernelsEmulated, MseLoss) {
  const vec y = rnd(kN, 4), t = rnd(kN, 5);
  with_plant([&] {
    vec dy = poisoned(kN), row = poisoned(kRows);
    gx::mse_loss(y.data(), t.data(), dy.data(), row.data(), kRows, kCols, nullptr);
    const double inv = 1.0 / double(kN);
    dvec rdy(kN), rrow(kRows, 0.0);
    for (std::size_t i = 0; i < kN; ++i) {
      const double e = double(y[i]) - t[i];
      rdy[i] = e * inv;
      rrow[i / kCols] += 0.5 * e * e * inv;
    }
    return close(dy, rdy) && close(row, rrow, 1e-5, 1e-9);
  });
}

TEST(TransformerStepKernelsEmulated, ColumnSums) {
  const int rows = 150;  // three groups of 64 rows, the last partial
  const vec x = rnd(std::size_t(rows) * kCols, 6);
  with_plant([&] {
    vec out(kCols, 0.5f);  // accumulated into
    gx::column_sums(x.data(), out.data(), rows, kCols, nullptr);
    dvec ref(kCols, 0.5);
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < kCols; ++j) ref[std::size_t(j)] += x[std::size_t(r) * kCols + j];
    return close(out, ref, 1e-5, 1e-5);
  });
}

// In place, as the step calls it: dL/dg becomes dL/du.
TEST(TransformerStepKernelsEmulated, GeluBackwardInPlace) {
  const vec dg = rnd(kN, 7), u = rnd(kN, 8, -4.0f, 4.0f);
  with_plant([&] {
    vec d = dg;
    gx::gelu_backward(d.data(), u.data(), (long long)kN, nullptr);
    dvec ref(kN);
    for (std::size_t i = 0; i < kN; ++i) ref[i] = double(dg[i]) * xf::gelu_derivative(double(u[i]));
    return close(d, ref, 1e-5, 1e-5);  // float tanh: ~1e-6 absolute where the derivative crosses 0
  });
}

TEST(TransformerStepKernelsEmulated, CausalSoftmaxBackward) {
  const int count = 3, seq = 37;  // 111 rows: a partial group of 4
  const std::size_t n = std::size_t(count) * seq * seq;
  const float scale = 0.125f;
  // p: a causal softmax of random scores (zero above the diagonal), as the forward leaves it.
  vec p(n, 0.0f);
  const vec s = rnd(n, 9);
  for (std::size_t r = 0; r < std::size_t(count) * seq; ++r) {
    const int i = int(r % std::size_t(seq));
    double mx = -1e300, sum = 0;
    for (int j = 0; j <= i; ++j) mx = std::fmax(mx, scale * s[r * seq + j]);
    for (int j = 0; j <= i; ++j) sum += std::exp(scale * s[r * seq + j] - mx);
    for (int j = 0; j <= i; ++j) p[r * seq + j] = float(std::exp(scale * s[r * seq + j] - mx) / sum);
  }
  const vec dp0 = rnd(n, 10);
  with_plant([&] {
    vec dp = dp0;
    gx::causal_softmax_backward(p.data(), dp.data(), count, seq, scale, nullptr);
    dvec ref(n, 0.0);
    for (std::size_t r = 0; r < std::size_t(count) * seq; ++r) {
      const int i = int(r % std::size_t(seq));
      double dot = 0;
      for (int j = 0; j <= i; ++j) dot += double(p[r * seq + j]) * dp0[r * seq + j];
      for (int j = 0; j <= i; ++j)
        ref[r * seq + j] = xf::softmax_backward(double(p[r * seq + j]), double(dp0[r * seq + j]), dot, double(scale));
    }
    return close(dp, ref, 1e-4, 1e-6);
  });
}

TEST(TransformerStepKernelsEmulated, ToBf16RoundsToNearestEven) {
  const vec x = rnd(kN, 11);
  with_plant([&] {
    std::vector<__nv_bfloat16> h(kN, __nv_bfloat16{0x7FC1});  // a NaN pattern the kernel must overwrite
    gx::to_bf16(x.data(), h.data(), (long long)kN, nullptr);
    vec got(kN);
    dvec ref(kN);
    for (std::size_t i = 0; i < kN; ++i) got[i] = __bfloat162float(h[i]), ref[i] = xf::round_bf16(x[i]);
    return close(got, ref, 0.0, 0.0);
  });
}

// AdamW with the step count on the device: two steps, each with its own bias corrections; the
// BF16 copy of the weights follows.
TEST(TransformerStepKernelsEmulated, AdamwCountedAndTheBf16Copy) {
  const vec w0 = rnd(kN, 12), g = rnd(kN, 13);
  const float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
  with_plant([&] {
    vec w = w0, m(kN, 0.0f), v(kN, 0.0f);
    std::vector<__nv_bfloat16> w16(kN, __nv_bfloat16{0x7FC1});
    int t = 0;
    gx::advance_step(&t, nullptr);
    auto adamw = [&] {
      gx::adamw_counted(w.data(), m.data(), v.data(), g.data(), w16.data(), (long long)kN, lr, b1, b2, eps, wd, &t,
                        nullptr);
    };
    adamw();
    gx::advance_step(&t, nullptr);
    adamw();
    dvec rw(kN), rm(kN, 0.0), rv(kN, 0.0);
    for (std::size_t i = 0; i < kN; ++i) {
      double wi = w0[i];
      for (int step = 1; step <= 2; ++step) {
        double c1, c2;
        gtb::mlp::adam_corrections(step, double(b1), double(b2), c1, c2);
        xf::adamw(wi, rm[i], rv[i], double(g[i]), double(lr), double(b1), double(b2), double(eps), double(wd), c1, c2);
      }
      rw[i] = wi;
    }
    vec w16f(kN);
    dvec w16ref(kN);
    for (std::size_t i = 0; i < kN; ++i) w16f[i] = __bfloat162float(w16[i]), w16ref[i] = xf::round_bf16(w[i]);
    return t == 2 && close(w, rw, 1e-5, 1e-7) && close(m, rm, 1e-5, 1e-9) && close(v, rv, 1e-5, 1e-12) &&
           close(w16f, w16ref, 0.0, 0.0);
  });
}

}  // namespace
