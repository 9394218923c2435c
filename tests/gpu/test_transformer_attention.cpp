// GPU tests of the fused causal attention kernels: o, lse and dqkv against a float64 attention on
// the host, over shapes that cross the tile edges (skipped where there is no usable GPU).
#include <cmath>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/common/cuda/check.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/transformer/cuda/attention.h"
#include "tests/common/attention_f64.h"

namespace gtb::test {
// Test names and failures show the shape, not its bytes.
inline void PrintTo(const AttnShape& s, std::ostream* os) { *os << s.name(); }
}  // namespace gtb::test

namespace gx = gtb::cuda::xfmr;
using gtb::test::AttnShape;

namespace {
struct Dev {
  float* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) {
    void* q = nullptr;
    GTB_CUDA_CHECK(cudaMalloc(&q, n * sizeof(float)));
    p = static_cast<float*>(q);
    std::vector<float> nan(n);
    gtb::poison(nan.data(), n);  // what a kernel does not write stays NaN and fails the check
    GTB_CUDA_CHECK(cudaMemcpy(p, nan.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  explicit Dev(const std::vector<float>& h) : Dev(h.size()) {
    GTB_CUDA_CHECK(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { cudaFree(p); }
  std::vector<float> get() const {
    std::vector<float> h(n);
    GTB_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
    return h;
  }
};

struct Fused {
  std::vector<float> o, lse, dqkv;
};
Fused run_fused(const AttnShape& s, const std::vector<float>& qkv, const std::vector<float>& dout) {
  Dev Q(qkv), G(dout), O(s.o_size()), L(s.lse_size()), DL(s.lse_size()), DQ(s.qkv_size());
  const float scale = 1.0f / std::sqrt(float(s.head_dim));
  gx::fused_attention_forward(Q.p, O.p, L.p, s.batch, s.seq, s.heads, s.head_dim, scale, nullptr);
  gx::fused_attention_backward(Q.p, O.p, G.p, L.p, DL.p, DQ.p, s.batch, s.seq, s.heads, s.head_dim, scale, nullptr);
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  return {O.get(), L.get(), DQ.get()};
}

// Queries and keys in +-2.5 give scaled scores of standard deviation about 2 at every head width:
// peaked rows, where a wrong max or mask shows, rather than nearly uniform ones.
std::vector<float> inputs(const AttnShape& s, std::uint64_t seed) {
  std::vector<float> qkv(s.qkv_size());
  gtb::fill_uniform(qkv.data(), qkv.size(), seed, -2.5f, 2.5f);
  const std::size_t ld = 3 * std::size_t(s.d());
  for (std::size_t t = 0; t < s.tokens(); ++t)  // values in +-1
    for (int c = 2 * s.d(); c < 3 * s.d(); ++c) qkv[t * ld + std::size_t(c)] *= 0.4f;
  return qkv;
}

class FusedAttention : public testing::TestWithParam<AttnShape> {};

TEST_P(FusedAttention, MatchesFloat64) {
  const AttnShape s = GetParam();
  const auto qkv = inputs(s, 100 + std::uint64_t(s.seq));
  std::vector<float> dout(s.o_size());
  gtb::fill_uniform(dout.data(), dout.size(), 200 + std::uint64_t(s.seq), -1.0f, 1.0f);
  const Fused got = run_fused(s, qkv, dout);
  const auto c = gtb::test::check_attention(s, qkv, dout, got.o.data(), got.lse.data(), got.dqkv.data());
  EXPECT_TRUE(c.ok) << s.name() << ": " << c.detail;
  // The same check against the non-causal attention must fail: the comparison sees the mask.
  EXPECT_TRUE(c.sees_mask) << s.name();
}

// Tile rows are 64 or 32 (forward) and 32 or 16 (backward): seq 1, one tile exactly, one past it,
// several with a ragged end; every head width; several samples and heads, up to 64 x 64 of them.
INSTANTIATE_TEST_SUITE_P(Shapes, FusedAttention,
                         testing::Values(AttnShape{1, 1, 1, 32}, AttnShape{2, 1, 3, 128}, AttnShape{1, 64, 1, 32},
                                         AttnShape{2, 65, 2, 32}, AttnShape{3, 37, 2, 64}, AttnShape{1, 32, 1, 64},
                                         AttnShape{2, 100, 3, 64}, AttnShape{1, 16, 1, 128},
                                         AttnShape{2, 47, 2, 128}, AttnShape{1, 203, 2, 128},
                                         AttnShape{1, 300, 1, 32}, AttnShape{64, 16, 64, 32},
                                         AttnShape{1, 1000, 1, 64}),
                         [](const testing::TestParamInfo<AttnShape>& i) {
                           const AttnShape& s = i.param;
                           return "b" + std::to_string(s.batch) + "_s" + std::to_string(s.seq) + "_h" +
                                  std::to_string(s.heads) + "_d" + std::to_string(s.head_dim);
                         });

// No atomics: two backward passes give the same bits.
TEST(FusedAttentionGpu, BackwardIsDeterministic) {
  const AttnShape s{2, 150, 2, 64};
  const auto qkv = inputs(s, 7);
  std::vector<float> dout(s.o_size());
  gtb::fill_uniform(dout.data(), dout.size(), 8, -1.0f, 1.0f);
  const Fused a = run_fused(s, qkv, dout), b = run_fused(s, qkv, dout);
  EXPECT_EQ(a.dqkv, b.dqkv);
}

TEST(FusedAttentionGpu, UnsupportedShapesAreRefusedByName) {
  EXPECT_TRUE(gx::fused_attention_supported(32));
  EXPECT_TRUE(gx::fused_attention_supported(64));
  EXPECT_TRUE(gx::fused_attention_supported(128));
  EXPECT_FALSE(gx::fused_attention_supported(48));
  EXPECT_FALSE(gx::fused_attention_supported(256));
  try {
    gx::fused_attention_forward(nullptr, nullptr, nullptr, 1, 8, 1, 48, 1.0f, nullptr);
    FAIL() << "head_dim 48 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim 48"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gx::fused_attention_backward(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 0, 1, 64, 1.0f,
                                            nullptr),
               std::invalid_argument);
  EXPECT_THROW(gx::fused_attention_forward(nullptr, nullptr, nullptr, 300, 8, 256, 64, 1.0f, nullptr),
               std::invalid_argument);
}
}  // namespace
