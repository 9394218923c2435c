// GPU tests of the transformer block stack's training step: one step against the float64
// reference (both attentions, every precision, both batchings of the attention GEMMs), graph replay
// against eager, the memory accounting, the cap, and bad input (skipped where there is no GPU).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/errors.h"
#include "kernels/transformer/cuda/attention.h"
#include "kernels/transformer/cuda/step.h"
#include "kernels/transformer/reference.h"
#include "tests/common/small_configs.h"

namespace xf = gtb::xfmr;
namespace xg = gtb::xfmr::gpu;
namespace gx = gtb::cuda::xfmr;

namespace {
xf::Config cfg(int layers, int d, int heads, int seq, int batch) {
  return gtb::test::xfmr_config(layers, d, heads, seq, batch);
}

// One poisoned step from the initial state against the float64 reference.
xf::CheckResult checked_step(const xf::Config& c, xf::Attention a, gtb::Precision p) {
  gx::GpuBlocks m(c, a, p);
  const xf::Data data = xf::make_data(c, 99);
  m.load_data(data.x.data(), data.target.data());
  const std::vector<float> p0 = m.params(), zeros(p0.size(), 0.0f);
  m.poison();
  m.step();
  const double loss = m.loss();
  const std::vector<float> g = m.grads(), p1 = m.params(), ma = m.adam_m(), va = m.adam_v();
  const xf::RefStep ref =
      xf::reference_step(c, std::vector<double>(p0.begin(), p0.end()), {}, {}, 0, data.x.data(), data.target.data());
  return xf::check_step(c, ref, p0, zeros, zeros, 0, xf::StepOutputs{loss, g.data(), p1.data(), ma.data(), va.data()},
                        xg::tolerance(c, p));
}

bool fused_ok(const xf::Config& c) { return gx::fused_attention_supported(c.head_dim()); }
}  // namespace

TEST(TransformerStepGpu, OneStepMatchesFloat64EveryAttentionAndPrecision) {
  // batch 2 < heads 4: one strided-batched call per sample; batch 5 > heads 2: one per head.
  for (const xf::Config& c : {cfg(2, 64, 4, 48, 2), cfg(1, 64, 2, 64, 5)})
    for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused})
      for (gtb::Precision p : {gtb::Precision::fp32, gtb::Precision::tf32, gtb::Precision::bf16}) {
        if (a == xf::Attention::fused && !fused_ok(c)) continue;
        const xf::CheckResult r = checked_step(c, a, p);
        EXPECT_TRUE(r.ok) << xf::to_string(a) << " " << gtb::to_string(p) << " batch " << c.batch << ": " << r.detail;
      }
}

TEST(TransformerStepGpu, AWrongGradientFailsTheCheck) {
  // The check can fail: a step whose weights were perturbed after the snapshot is not the reference's.
  const xf::Config c = cfg(1, 64, 4, 32, 2);
  gx::GpuBlocks m(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xf::Data data = xf::make_data(c, 5);
  m.load_data(data.x.data(), data.target.data());
  std::vector<float> p0 = m.params(), bent = p0;
  const xf::Layout lay(c);
  bent[lay.at(0, xf::P::w_1)] += 0.5f;
  m.set_params(bent);
  m.step();
  const double loss = m.loss();
  const std::vector<float> g = m.grads(), p1 = m.params(), ma = m.adam_m(), va = m.adam_v(), zeros(p0.size(), 0.0f);
  const xf::RefStep ref =
      xf::reference_step(c, std::vector<double>(p0.begin(), p0.end()), {}, {}, 0, data.x.data(), data.target.data());
  EXPECT_FALSE(xf::check_step(c, ref, p0, zeros, zeros, 0, xf::StepOutputs{loss, g.data(), p1.data(), ma.data(), va.data()},
                              xf::fp32_tolerance())
                   .ok);
}

TEST(TransformerStepGpu, GraphReplayDoesWhatTheEagerStepDoes) {
  const xf::Config c = cfg(2, 64, 4, 32, 2);
  gx::GpuBlocks m(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xf::Data data = xf::make_data(c, 7);
  m.load_data(data.x.data(), data.target.data());
  const std::vector<float> p0 = m.params();
  m.step();
  m.step();  // the second step's bias corrections differ from the first's
  const std::vector<float> eager = m.params();
  m.set_params(p0);
  m.reset_optimizer();
  EXPECT_THROW(m.replay(), std::logic_error);
  m.capture_graph();
  m.replay();
  m.replay();
  const std::vector<float> replayed = m.params();
  EXPECT_EQ(m.steps_taken(), 2);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < eager.size(); ++i) {
    num += std::pow(double(replayed[i]) - eager[i], 2);
    den += double(eager[i]) * eager[i];
  }
  EXPECT_LE(std::sqrt(num / den), 1e-6);
  EXPECT_GT(m.graph_nodes(), 0u);
}

TEST(TransformerStepGpu, DeviceBytesAreTheAccountedBuffers) {
  for (xf::Attention a : {xf::Attention::materialised, xf::Attention::fused})
    for (gtb::Precision p : {gtb::Precision::fp32, gtb::Precision::bf16}) {
      const xf::Config c = cfg(2, 128, 2, 128, 2);
      if (a == xf::Attention::fused && !fused_ok(c)) continue;
      gx::GpuBlocks m(c, a, p);
      const std::size_t want = xg::buffers(c, a, p).bytes(c.layers);
      EXPECT_GE(m.device_bytes(), want);
      EXPECT_LE(m.device_bytes(), want + 256 * 200);  // each allocation rounded up to 256 bytes
    }
}

TEST(TransformerStepGpu, OverTheCapIsOutOfMemory) {
  EXPECT_THROW(gx::GpuBlocks(cfg(2, 128, 4, 256, 4), xf::Attention::materialised, gtb::Precision::fp32, 1000000),
               gtb::OutOfMemory);
}

TEST(TransformerStepGpu, PiecesAreTimedAndBadInputIsRefused) {
  const xf::Config c = cfg(1, 64, 4, 32, 2);
  gx::GpuBlocks m(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xf::Data data = xf::make_data(c, 3);
  m.load_data(data.x.data(), data.target.data());
  const gx::PieceTimes pt = m.pieces(2);
  EXPECT_EQ(pt.steps, 2);
  for (int i = 0; i < int(gx::Piece::count); ++i) EXPECT_GT(pt.seconds[i], 0.0) << "piece " << i;
  EXPECT_GT(m.launches_per_step(), 20);
  EXPECT_THROW(m.set_params(std::vector<float>(3)), std::invalid_argument);
  EXPECT_THROW(gx::GpuBlocks(c, xf::Attention::materialised, gtb::Precision::fp16), std::invalid_argument);
  EXPECT_THROW(gx::GpuBlocks(cfg(1, 66, 4, 32, 2), xf::Attention::materialised, gtb::Precision::fp32),
               std::invalid_argument);  // d_model not a multiple of heads
}

TEST(TransformerStepGpu, TheReducedCheckRunsTheRecordsCodePath) {
  // A record over the reference's bound is checked on one layer and one sequence at its own width.
  const xg::CheckedConfig cc = xg::checked_config(cfg(2, 1024, 16, 128, 128));
  ASSERT_TRUE(cc.reduced);
  for (gtb::Precision p : {gtb::Precision::fp32, gtb::Precision::bf16}) {
    const xf::CheckResult r = checked_step(cc.config, xf::Attention::materialised, p);
    EXPECT_TRUE(r.ok) << gtb::to_string(p) << ": " << r.detail;
  }
}
