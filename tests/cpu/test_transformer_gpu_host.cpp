// Host tests of the GPU transformer step's host decisions: attention batching, device memory
// accounting, tolerances, the checked configuration and the registered GPU sweeps.
#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "harness/runtime/gtb.h"
#include "kernels/transformer/cuda/step_plan.h"

namespace xf = gtb::xfmr;
namespace xg = gtb::xfmr::gpu;

namespace {
xf::Config cfg(int layers, int d, int heads, int seq, int batch) {
  xf::Config c;
  c.layers = layers, c.d_model = d, c.heads = heads, c.seq_len = seq, c.batch = batch;
  return c;
}
}  // namespace

// Every (sample, head) matrix is reached exactly once, at the offsets of the step's layouts.
TEST(TransformerGpuHost, AttentionBatchingReachesEveryHeadOnce) {
  for (const auto& c : {cfg(1, 64, 4, 8, 2), cfg(1, 64, 2, 8, 5), cfg(1, 96, 3, 4, 3), cfg(1, 32, 1, 16, 7)}) {
    const xg::AttentionBatching a = xg::attention_batching(c);
    const long long S = c.seq_len, d = c.d_model, dh = c.head_dim(), H = c.heads;
    EXPECT_EQ(a.calls, std::min(c.batch, c.heads));
    EXPECT_EQ(a.calls * a.count, c.batch * c.heads);
    std::set<std::tuple<long long, long long, long long>> seen, want;
    for (int call = 0; call < a.calls; ++call)
      for (int i = 0; i < a.count; ++i)
        seen.insert({call * a.qkv_step + i * a.qkv_stride, call * a.ctx_step + i * a.ctx_stride,
                     call * a.p_step + i * a.p_stride});
    for (long long b = 0; b < c.batch; ++b)
      for (long long h = 0; h < H; ++h) want.insert({b * S * 3 * d + h * dh, b * S * d + h * dh, (b * H + h) * S * S});
    EXPECT_EQ(seen, want) << "batch " << c.batch << " heads " << c.heads;
  }
}

TEST(TransformerGpuHost, MemoryAccountingGrowsAsEachAttentionStores) {
  const xf::Config c = cfg(2, 256, 4, 1024, 2);
  const xg::Buffers mat = xg::buffers(c, xf::Attention::materialised, gtb::Precision::fp32);
  const xg::Buffers fus = xg::buffers(c, xf::Attention::fused, gtb::Precision::fp32);
  const xg::Buffers m16 = xg::buffers(c, xf::Attention::materialised, gtb::Precision::bf16);
  EXPECT_EQ(mat.per_layer_attention, std::size_t(2) * 4 * 1024 * 1024);  // B H S^2
  EXPECT_EQ(fus.per_layer_attention, std::size_t(2) * 4 * 1024);         // B H S
  EXPECT_EQ(mat.params, xf::Layout(c).total);
  EXPECT_EQ(mat.bf16_weights, 0u);
  EXPECT_EQ(m16.bf16_weights, mat.params);
  // A BF16 slot holds every operand cast into it: activations up to T x 4d and the probabilities.
  EXPECT_GE(m16.bf16_slot, std::size_t(c.tokens()) * 4 * 256);
  EXPECT_GE(m16.bf16_slot, mat.per_layer_attention);
  EXPECT_LT(fus.bytes(c.layers), mat.bytes(c.layers));
  EXPECT_GT(m16.bytes(c.layers), mat.bytes(c.layers));
  // Doubling seq_len at fixed tokens doubles materialised attention's bytes, leaves the fused one's.
  const xf::Config c2 = cfg(2, 256, 4, 2048, 1);
  EXPECT_EQ(xg::buffers(c2, xf::Attention::materialised, gtb::Precision::fp32).per_layer_attention,
            2 * mat.per_layer_attention);
  EXPECT_EQ(xg::buffers(c2, xf::Attention::fused, gtb::Precision::fp32).per_layer_attention, fus.per_layer_attention);
  // One more layer adds exactly one layer's stored activations and one more residual-stream slice.
  const xf::Config c3 = cfg(3, 256, 4, 1024, 2);
  const xg::Buffers b3 = xg::buffers(c3, xf::Attention::fused, gtb::Precision::fp32);
  EXPECT_EQ(b3.bytes(3) - fus.bytes(2),
            4 * (4 * (b3.params - fus.params) + fus.per_layer + fus.per_layer_attention + std::size_t(c.tokens()) * 256));
}

TEST(TransformerGpuHost, TolerancePerPrecisionAndBadPrecision) {
  const xf::Config c = cfg(2, 128, 4, 64, 2);
  const xf::Tolerance f = xg::tolerance(c, gtb::Precision::fp32), t = xg::tolerance(c, gtb::Precision::tf32),
                      b = xg::tolerance(c, gtb::Precision::bf16);
  EXPECT_EQ(f.grad_rtol, xf::fp32_tolerance().grad_rtol);
  EXPECT_EQ(b.grad_rtol, xf::bf16_tolerance(c).grad_rtol);
  EXPECT_GT(t.grad_rtol, f.grad_rtol);
  EXPECT_LT(t.grad_rtol, b.grad_rtol);
  EXPECT_NEAR(b.grad_rtol / t.grad_rtol, 8.0, 1e-9);  // 2^-8 against 2^-11
  try {
    xg::tolerance(c, gtb::Precision::fp16);
    FAIL() << "fp16 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
  }
}

TEST(TransformerGpuHost, CheckedConfigurationKeepsTheCodePathAndBoundsTheReference) {
  const xg::CheckedConfig small = xg::checked_config(cfg(2, 256, 4, 256, 4));
  EXPECT_FALSE(small.reduced);
  EXPECT_EQ(small.config.batch, 4);
  for (const auto& c : {cfg(2, 4096, 32, 8192, 1), cfg(2, 1024, 16, 128, 128), cfg(4, 1024, 16, 8192, 2)}) {
    const xg::CheckedConfig r = xg::checked_config(c);
    EXPECT_TRUE(r.reduced);
    EXPECT_EQ(r.config.d_model, c.d_model);
    EXPECT_EQ(r.config.heads, c.heads);
    EXPECT_EQ(r.config.layers, 1);
    EXPECT_EQ(r.config.batch, 1);
    EXPECT_LE(r.config.seq_len, xg::kCheckedSeqMax);
    EXPECT_GE(r.config.seq_len, std::min(c.seq_len, xg::kCheckedSeqMin));
    EXPECT_TRUE(xg::reference_affordable(r.config) || r.config.seq_len == xg::kCheckedSeqMin)
        << r.config.seq_len << " at d_model " << c.d_model;
    EXPECT_NE(r.note.find("reduced"), std::string::npos);
    EXPECT_NE(r.note.find(std::to_string(c.d_model)), std::string::npos);
  }
  // Just over the FLOP bound: reduced; at d_model 4096 even the clamped sequence halves to the floor.
  EXPECT_EQ(xg::checked_config(cfg(2, 4096, 32, 2048, 2)).config.seq_len, xg::kCheckedSeqMin);
}

TEST(TransformerGpuHost, SweepRowsSpanTheIssuesRanges) {
  const auto seq = xg::seq_rows(16384);
  ASSERT_FALSE(seq.empty());
  EXPECT_EQ(seq.front()[0], 128);
  EXPECT_EQ(seq.back()[0], 8192);
  for (const auto& r : seq) EXPECT_EQ(r[0] * r[1], 16384);
  EXPECT_EQ(xg::seq_rows(1000).size(), 0u);  // no power of two from 128 divides 1000 tokens
  const auto w = xg::width_rows();
  EXPECT_EQ(w.front()[0], 256);
  EXPECT_EQ(w.back()[0], 4096);
  for (const auto& r : w) {
    EXPECT_EQ(r[0] % r[1], 0) << r[0];
    EXPECT_LE(r[0] / r[1], 128);
  }
}

// The GPU records are registered in every build (skipped without CUDA), with the CPU records'
// workload and variant names, and the quick list stays small (the GPU check's budget).
TEST(TransformerGpuHost, RegisteredGpuRecords) {
  const auto quick = gtb::planned_records("transformer", gtb::Suite::quick);
  const auto full = gtb::planned_records("transformer", gtb::Suite::full);
  std::size_t quick_gpu = 0;
  for (const auto& r : quick)
    if (r.backend == gtb::Backend::cuda) {
      ++quick_gpu;
      EXPECT_TRUE(r.workload == "configs" || r.workload == "seq_sweep") << r.id;
    }
  EXPECT_GT(quick_gpu, 0u);
  EXPECT_LE(quick_gpu, 12u);
  std::set<std::string> workloads, variants;
  std::set<std::int64_t> seqs, widths;
  std::set<std::string> precisions, modes;
  for (const auto& r : full) {
    if (r.backend != gtb::Backend::cuda) continue;
    workloads.insert(r.workload), variants.insert(r.variant);
    for (const char* k : {"layers", "d_model", "heads", "seq_len", "batch"}) ASSERT_TRUE(r.params.contains(k)) << r.id;
    seqs.insert(r.params["seq_len"].get<std::int64_t>());
    widths.insert(r.params["d_model"].get<std::int64_t>());
    if (r.options.contains("precision")) precisions.insert(r.options["precision"].get<std::string>());
    if (r.options.contains("mode")) modes.insert(r.options["mode"].get<std::string>());
  }
  EXPECT_EQ(workloads, (std::set<std::string>{"batch_sweep", "configs", "heads_sweep", "seq_sweep", "width_sweep"}));
  EXPECT_EQ(variants, (std::set<std::string>{"fused", "materialised"}));
  EXPECT_EQ(*seqs.begin(), 128);
  EXPECT_EQ(*seqs.rbegin(), 8192);
  EXPECT_EQ(*widths.begin(), 128);  // the CPU's smallest configuration, paired
  EXPECT_EQ(*widths.rbegin(), 4096);
  EXPECT_EQ(precisions, (std::set<std::string>{"bf16", "fp32", "tf32"}));
  EXPECT_EQ(modes, (std::set<std::string>{"eager", "graph"}));
}
