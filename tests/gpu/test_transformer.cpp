// GPU tests of the transformer family's own CUDA kernels against the shared math evaluated in
// float64 on the host (skipped where there is no usable GPU).
#include <cmath>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/common/cuda/check.h"
#include "kernels/common/random.h"
#include "kernels/transformer/block.h"
#include "kernels/transformer/cuda/elementwise.h"

namespace xf = gtb::xfmr;
namespace gx = gtb::cuda::xfmr;

namespace {
struct Dev {
  float* p = nullptr;
  explicit Dev(const std::vector<float>& h) {
    void* q = nullptr;
    GTB_CUDA_CHECK(cudaMalloc(&q, h.size() * sizeof(float)));
    p = static_cast<float*>(q);
    GTB_CUDA_CHECK(cudaMemcpy(p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Dev() { cudaFree(p); }
  std::vector<float> get(std::size_t n) const {
    std::vector<float> h(n);
    GTB_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
  }
};
std::vector<float> rnd(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  gtb::fill_uniform(v.data(), n, seed, -1.0f, 1.0f);
  return v;
}
}  // namespace

TEST(TransformerGpu, LayerNormForwardAndBackwardMatchFloat64) {
  const int rows = 37, d = 200;
  const auto x = rnd(std::size_t(rows) * d, 1), g = rnd(d, 2), b = rnd(d, 3), dy = rnd(std::size_t(rows) * d, 4),
             dres = rnd(std::size_t(rows) * d, 5);
  Dev X(x), G(g), B(b), DY(dy), DR(dres), Y(std::vector<float>(x.size(), NAN)), M(std::vector<float>(rows, NAN)),
      R(std::vector<float>(rows, NAN)), DX(std::vector<float>(x.size(), NAN)), DG(std::vector<float>(d, 0)),
      DB(std::vector<float>(d, 0));
  gx::layer_norm_forward(X.p, Y.p, M.p, R.p, G.p, B.p, rows, d, 1e-5f, nullptr);
  gx::layer_norm_backward(DY.p, X.p, M.p, R.p, G.p, DR.p, DX.p, DG.p, DB.p, rows, d, nullptr);
  const auto y = Y.get(x.size()), dx = DX.get(x.size()), dg = DG.get(d);
  std::vector<double> dgr(d, 0.0);
  for (int r = 0; r < rows; ++r) {
    double mu = 0, var = 0, s1 = 0, s2 = 0;
    for (int j = 0; j < d; ++j) mu += x[std::size_t(r) * d + j] / double(d);
    for (int j = 0; j < d; ++j) var += std::pow(x[std::size_t(r) * d + j] - mu, 2) / d;
    const double rs = xf::ln_rstd(var, 1e-5);
    for (int j = 0; j < d; ++j) {
      const std::size_t i = std::size_t(r) * d + j;
      const double xh = (x[i] - mu) * rs;
      EXPECT_NEAR(y[i], xf::ln_forward(double(x[i]), mu, rs, double(g[j]), double(b[j])), 1e-5) << "row " << r;
      s1 += dy[i] * g[j] / double(d);
      s2 += dy[i] * g[j] * xh / double(d);
      dgr[std::size_t(j)] += dy[i] * xh;
    }
    for (int j = 0; j < d; ++j) {
      const std::size_t i = std::size_t(r) * d + j;
      const double ref = dres[i] + xf::ln_backward(double(dy[i]) * g[j], (x[i] - mu) * rs, rs, s1, s2);
      EXPECT_NEAR(dx[i], ref, 1e-4 * (1 + std::fabs(ref))) << "row " << r;
    }
  }
  for (int j = 0; j < d; ++j) EXPECT_NEAR(dg[std::size_t(j)], dgr[std::size_t(j)], 1e-4 * rows);
}

TEST(TransformerGpu, CausalSoftmaxZeroesTheFutureAndSumsToOne) {
  const int count = 3, seq = 70;
  const auto s = rnd(std::size_t(count) * seq * seq, 6);
  Dev S(s);
  gx::causal_softmax(S.p, count, seq, 0.5f, nullptr);
  const auto p = S.get(s.size());
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < seq; ++i) {
      double sum = 0;
      for (int j = 0; j < seq; ++j) {
        const float v = p[(std::size_t(c) * seq + i) * seq + j];
        if (j > i) {
          EXPECT_EQ(v, 0.0f);
        }
        sum += v;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5) << "matrix " << c << " row " << i;
    }
}

TEST(TransformerGpu, BiasGeluAndAdamwMatchTheSharedMath) {
  const int rows = 5, n = 300;
  const auto u = rnd(std::size_t(rows) * n, 7), b = rnd(n, 8);
  Dev U(u), B(b), G(std::vector<float>(u.size(), NAN));
  gx::bias_gelu(U.p, G.p, B.p, rows, n, nullptr);
  const auto g = G.get(u.size());
  for (std::size_t i = 0; i < u.size(); ++i)
    EXPECT_NEAR(g[i], xf::gelu(double(u[i]) + b[i % n]), 1e-6) << "element " << i;
  const long long m = 1000;
  const auto w = rnd(std::size_t(m), 9), gr = rnd(std::size_t(m), 10);
  Dev W(w), M(std::vector<float>(std::size_t(m), 0)), V(std::vector<float>(std::size_t(m), 0)), GR(gr);
  gx::adamw(W.p, M.p, V.p, GR.p, m, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 10.0f, 1000.0f, nullptr);
  const auto w1 = W.get(std::size_t(m));
  for (std::size_t i = 0; i < std::size_t(m); ++i) {
    double wd = w[i], md = 0, vd = 0;
    xf::adamw(wd, md, vd, double(gr[i]), 1e-3, 0.9, 0.999, 1e-8, 0.01, 10.0, 1000.0);
    EXPECT_NEAR(w1[i], wd, 1e-6 * (1 + std::fabs(wd)));
  }
}
