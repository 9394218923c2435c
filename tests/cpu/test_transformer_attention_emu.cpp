// The fused attention kernels' own code, run on CPU threads through the host stand-in of
// tests/cpu/cuda_emu, against the float64 attention: their tiling, causal masks, online softmax and
// barriers are tested on machines without a GPU. Device numerics are the GPU test's business.
#include <cmath>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation units themselves, compiled for the host stand-in.
#include "kernels/transformer/cuda/attention_bwd.cu"
#include "kernels/transformer/cuda/attention_fwd.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/common/attention_f64.h"

namespace gtb::test {
inline void PrintTo(const AttnShape& s, std::ostream* os) { *os << s.name(); }
}  // namespace gtb::test

namespace {
namespace gx = gtb::cuda::xfmr;
using gtb::test::AttnShape;

struct Fused {
  std::vector<float> o, lse, dqkv;
};
Fused run_emulated(const AttnShape& s, const std::vector<float>& qkv, const std::vector<float>& dout) {
  Fused r{std::vector<float>(s.o_size()), std::vector<float>(s.lse_size()), std::vector<float>(s.qkv_size())};
  std::vector<float> delta(s.lse_size());
  gtb::poison(r.o.data(), r.o.size());
  gtb::poison(r.lse.data(), r.lse.size());
  gtb::poison(r.dqkv.data(), r.dqkv.size());
  gtb::poison(delta.data(), delta.size());
  const float scale = 1.0f / std::sqrt(float(s.head_dim));
  gx::fused_attention_forward(qkv.data(), r.o.data(), r.lse.data(), s.batch, s.seq, s.heads, s.head_dim, scale,
                              nullptr);
  gx::fused_attention_backward(qkv.data(), r.o.data(), dout.data(), r.lse.data(), delta.data(), r.dqkv.data(),
                               s.batch, s.seq, s.heads, s.head_dim, scale, nullptr);
  return r;
}

class FusedAttentionEmulated : public testing::TestWithParam<AttnShape> {};

TEST_P(FusedAttentionEmulated, MatchesFloat64) {
  const AttnShape s = GetParam();
  std::vector<float> qkv(s.qkv_size()), dout(s.o_size());
  gtb::fill_uniform(qkv.data(), qkv.size(), 300 + std::uint64_t(s.seq), -2.5f, 2.5f);
  gtb::fill_uniform(dout.data(), dout.size(), 400 + std::uint64_t(s.seq), -1.0f, 1.0f);
  const Fused got = run_emulated(s, qkv, dout);
  const auto c = gtb::test::check_attention(s, qkv, dout, got.o.data(), got.lse.data(), got.dqkv.data());
  EXPECT_TRUE(c.ok) << c.detail;
  // The same check against the non-causal attention must fail: the comparison sees the mask.
  EXPECT_TRUE(c.sees_mask);
}

// Every head width; seq 1, a ragged last tile of each tile size (64, 32, 16 rows), several tiles;
// several samples and heads.
INSTANTIATE_TEST_SUITE_P(Shapes, FusedAttentionEmulated,
                         testing::Values(AttnShape{1, 1, 2, 32}, AttnShape{2, 65, 2, 32}, AttnShape{1, 130, 1, 32},
                                         AttnShape{3, 37, 2, 64}, AttnShape{1, 100, 1, 64},
                                         AttnShape{2, 1, 1, 128}, AttnShape{2, 47, 2, 128}),
                         [](const testing::TestParamInfo<AttnShape>& i) {
                           const AttnShape& s = i.param;
                           return "b" + std::to_string(s.batch) + "_s" + std::to_string(s.seq) + "_h" +
                                  std::to_string(s.heads) + "_d" + std::to_string(s.head_dim);
                         });

TEST(FusedAttentionEmulated, RefusesBadShapesByName) {
  std::vector<float> x(96);
  try {
    gx::fused_attention_forward(x.data(), x.data(), x.data(), 1, 1, 1, 96, 1.0f, nullptr);
    FAIL() << "head_dim 96 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim 96"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gx::fused_attention_backward(x.data(), x.data(), x.data(), x.data(), x.data(), x.data(), 0, 4, 1, 32,
                                            1.0f, nullptr),
               std::invalid_argument);
  EXPECT_THROW(gx::fused_attention_forward(x.data(), x.data(), x.data(), 65536, 1, 1, 32, 1.0f, nullptr),
               std::invalid_argument);
}
}  // namespace
