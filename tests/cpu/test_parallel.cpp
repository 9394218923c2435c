// Parallel family (CPU): nccl-tests' size and bandwidth conventions, the input pattern, DDP bucket
// assignment and where buckets lie in the flat layout, shards, the projection arithmetic, the GPU-per-
// rank rule, and the data-parallel step against the float64 reference (one rank, no MPI needed).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "kernels/common/verify.h"
#include "kernels/parallel/collective.h"
#include "kernels/parallel/cpu/dp_step.h"
#include "kernels/parallel/cuda/nccl.h"
#include "kernels/parallel/projection.h"
#include "kernels/train/cpu/mlp.h"

namespace par = gtb::parallel;
namespace mlp = gtb::mlp;

namespace {
mlp::Config model(int width, int depth) {
  mlp::Config c;
  c.input = c.width = width;
  c.depth = depth;
  c.classes = 16;
  return c;
}
}  // namespace

TEST(Collective, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(par::bus_factor(par::Collective::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(par::bus_factor(par::Collective::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(par::bus_factor(par::Collective::reduce_scatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(par::bus_factor(par::Collective::all_reduce, 1), 0.0);
  EXPECT_THROW(par::bus_factor(par::Collective::all_reduce, 0), std::invalid_argument);
  // 1 GB in 10 ms over 4 ranks: algbw 100 GB/s, all-reduce busbw 150 GB/s.
  EXPECT_DOUBLE_EQ(par::algbw_gbps(1e9, 0.01), 100.0);
  EXPECT_DOUBLE_EQ(par::busbw_gbps(par::Collective::all_reduce, 4, 1e9, 0.01), 150.0);
}

TEST(Collective, SizeConvention) {
  // The size names the large buffer: 4 ranks, 4096 bytes of float = 1024 elements.
  auto ar = par::counts_of(par::Collective::all_reduce, 4096, 4, 4);
  EXPECT_EQ(ar.send, 1024u);
  EXPECT_EQ(ar.recv, 1024u);
  auto ag = par::counts_of(par::Collective::all_gather, 4096, 4, 4);
  EXPECT_EQ(ag.send, 256u);
  EXPECT_EQ(ag.recv, 1024u);
  auto rs = par::counts_of(par::Collective::reduce_scatter, 4096, 4, 4);
  EXPECT_EQ(rs.send, 1024u);
  EXPECT_EQ(rs.recv, 256u);
  // 3 ranks do not divide 1024 elements: the size really moved is rounded down.
  EXPECT_EQ(par::effective_bytes(par::Collective::all_gather, 4096, 4, 3), 341u * 3u * 4u);
  EXPECT_THROW(par::collective_from_string("broadcast"), std::invalid_argument);
  EXPECT_EQ(par::collective_from_string("reduce_scatter"), par::Collective::reduce_scatter);
}

TEST(Collective, PatternIsNonZeroAndExact) {
  for (int r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < 5000; ++i) {
      const float v = par::pattern_value(7, r, i);
      ASSERT_NE(v, 0.0f);
      ASSERT_LE(std::fabs(v), 1.0f);
      ASSERT_EQ(v * 64.0f, std::round(v * 64.0f));
    }
  // Different ranks get different data (a reduction that drops a rank would be seen).
  int same = 0;
  for (std::size_t i = 0; i < 1000; ++i) same += par::pattern_value(7, 0, i) == par::pattern_value(7, 1, i);
  EXPECT_LT(same, 50);
  // The float32 sum of the ranks' values equals the float64 sum.
  for (std::size_t i = 0; i < 1000; ++i) {
    float s = 0;
    for (int r = 0; r < 8; ++r) s += par::pattern_value(7, r, i);
    ASSERT_EQ(double(s), par::pattern_sum(7, 8, i));
  }
}

TEST(Buckets, DdpAssignmentFromTheLastLayer) {
  mlp::Config c = model(512, 4);
  const mlp::Layout lay(c);
  // Layers 2..3 are 512x512+512 floats (~1.05 MB each); layer 4 is small.
  const auto one = par::plan_buckets(lay, 1.0, 1.0);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0].first_layer, 4);
  EXPECT_EQ(one[0].last_layer, 3);  // layer 4 alone is below the 1 MiB first bucket
  EXPECT_EQ(one[1].first_layer, 2);
  EXPECT_EQ(one[2].last_layer, 1);
  const auto big = par::plan_buckets(lay, 1.0, 100.0);
  ASSERT_EQ(big.size(), 2u);  // the 1 MiB first bucket, then everything else
  std::size_t total = 0;
  for (const auto& b : big) total += b.elems;
  EXPECT_EQ(total, lay.parameters());
  EXPECT_THROW(par::plan_buckets(lay, 0.0, 1.0), std::invalid_argument);
}

// One rank without communication is a whole-batch step: it must match the float64 reference.
TEST(DpStep, OneRankMatchesFloat64Reference) {
  mlp::Config c = model(48, 3);
  const int rows = 24;
  const mlp::Dataset d = mlp::make_clusters(rows, c.input, c.classes, 5);
  const mlp::Layout lay(c);
  par::DpMlp m(c, rows, rows, par::plan_buckets(lay, 1.0, 1.0), false, false);
  const std::vector<float> p0 = m.params();
  m.poison();
  const float loss = m.step(d.x.data(), d.y.data());
  const std::vector<double> pd(p0.begin(), p0.end()), od(lay.total, 0.0);
  const mlp::RefStep ref = mlp::reference_step(c, pd, od, 0, d.x.data(), d.y.data(), rows);
  EXPECT_NEAR(loss, ref.loss, 1e-5 * ref.loss);
  const auto e = gtb::compare_elementwise(m.params().data(), ref.params_after.data(), lay.total, 1e-5, 1e-6);
  EXPECT_TRUE(e.ok) << e.detail;
  // A second step changes the weights again (momentum), and stays finite.
  const std::vector<float> p1 = m.params();
  m.step(d.x.data(), d.y.data());
  EXPECT_NE(p1, m.params());
  // Without communication the gradients never go through the buckets (poisoned, still untouched),
  // and no time is counted as communication: a one-rank baseline pays only for its step.
  for (const auto& buf : m.bucket_buffers())
    for (float v : buf) ASSERT_TRUE(std::isnan(v));
  EXPECT_LT(m.last_times().comm_s, 0.05 * m.last_times().total_s);
}

// Half the batch normalized by the whole batch gives half of the gradient sum: the property the
// all-reduce relies on (two shards' gradients add up to the whole batch's).
TEST(DpStep, ShardGradientsSumToTheWholeBatch) {
  mlp::Config c = model(32, 2);
  const int rows = 16;
  const mlp::Dataset d = mlp::make_clusters(rows, c.input, c.classes, 9);
  const mlp::Layout lay(c);
  auto buckets = par::plan_buckets(lay, 1.0, 25.0);
  par::DpMlp whole(c, rows, rows, buckets, false, false);
  par::DpMlp a(c, rows / 2, rows, buckets, false, false), b(c, rows / 2, rows, buckets, false, false);
  whole.step(d.x.data(), d.y.data());
  a.step(d.x.data(), d.y.data());
  b.step(d.x.data() + std::size_t(rows / 2) * std::size_t(c.input), d.y.data() + rows / 2);
  for (std::size_t i = 0; i < lay.total; ++i)
    ASSERT_NEAR(a.grads()[i] + b.grads()[i], whole.grads()[i], 1e-6 + 1e-5 * std::fabs(whole.grads()[i])) << i;
}

TEST(DpStep, RejectsBadInput) {
  mlp::Config c = model(32, 2);
  const mlp::Layout lay(c);
  const auto b = par::plan_buckets(lay, 1.0, 1.0);
  EXPECT_THROW(par::DpMlp(c, 0, 8, b, false, false), std::invalid_argument);
  EXPECT_THROW(par::DpMlp(c, 16, 8, b, false, false), std::invalid_argument);
  EXPECT_THROW(par::DpMlp(c, 8, 8, {}, false, false), std::invalid_argument);
  c.optim = mlp::Optim::adam;
  EXPECT_THROW(par::DpMlp(c, 8, 8, b, false, false), std::invalid_argument);
}

// The GPU step reduces each bucket as two flat ranges in place: over every bucket they must tile the
// weights and the biases exactly, and hold each of the bucket's layers.
TEST(Buckets, FlatRangesTileTheLayout) {
  for (const auto& [width, depth, cap] : {std::tuple{512, 4, 1.0}, std::tuple{300, 6, 0.5}, std::tuple{64, 3, 100.0}}) {
    mlp::Config c = model(width, depth);
    const mlp::Layout lay(c);
    const auto buckets = par::plan_buckets(lay, 1.0, cap);
    std::size_t w_lo = lay.bias_begin, b_lo = lay.total;  // buckets run from the last layer down
    for (const auto& bk : buckets) {
      const par::BucketRanges r = par::flat_ranges(lay, bk);
      EXPECT_EQ(r.weights.offset + r.weights.count, w_lo) << width << "x" << depth;
      EXPECT_EQ(r.biases.offset + r.biases.count, b_lo) << width << "x" << depth;
      w_lo = r.weights.offset;
      b_lo = r.biases.offset;
      for (int l = bk.last_layer; l <= bk.first_layer; ++l) {
        const auto L = std::size_t(l);
        EXPECT_GE(lay.w[L - 1], r.weights.offset);
        EXPECT_LE(lay.w[L - 1] + std::size_t(lay.dims[L - 1]) * std::size_t(lay.dims[L]),
                  r.weights.offset + r.weights.count);
        EXPECT_GE(lay.b[L - 1], r.biases.offset);
        EXPECT_LE(lay.b[L - 1] + std::size_t(lay.dims[L]), r.biases.offset + r.biases.count);
      }
    }
    EXPECT_EQ(w_lo, 0u);
    EXPECT_EQ(b_lo, lay.bias_begin);
  }
  const mlp::Layout lay(model(32, 2));
  EXPECT_THROW(par::flat_ranges(lay, par::Bucket{3, 1, 0}), std::invalid_argument);
  EXPECT_THROW(par::flat_ranges(lay, par::Bucket{1, 2, 0}), std::invalid_argument);
  EXPECT_THROW(par::check_cover(lay, {par::Bucket{2, 2, 10}}), std::invalid_argument);
  EXPECT_NO_THROW(par::check_cover(lay, par::plan_buckets(lay, 1.0, 1.0)));
}

TEST(DpStep, ShardsAreConsecutiveRows) {
  EXPECT_EQ(par::shard_first_row(0, 16), 0u);
  EXPECT_EQ(par::shard_first_row(3, 16), 48u);
  EXPECT_EQ(par::shard_first_row(7, 64), 448u);  // rank 7 of 8 ends at the global batch of 512
  EXPECT_THROW(par::shard_first_row(-1, 16), std::invalid_argument);
  EXPECT_THROW(par::shard_first_row(1, 0), std::invalid_argument);
}

TEST(Projection, RingAllReduceOverBusbw) {
  // 100 MB of gradients over 8 ranks at 100 GB/s: 2*7/8 * 1e8 / 1e11 = 1.75 ms of communication.
  const par::StepProjection p = par::project_step(0.010, 1e8, 8, 100.0);
  EXPECT_DOUBLE_EQ(p.comm_s, 1.75e-3);
  EXPECT_DOUBLE_EQ(p.step_no_overlap_s, 0.01175);
  EXPECT_DOUBLE_EQ(p.step_full_overlap_s, 0.010);
  EXPECT_DOUBLE_EQ(p.efficiency_no_overlap, 0.010 / 0.01175);
  EXPECT_DOUBLE_EQ(p.efficiency_full_overlap, 1.0);
  // Communication longer than compute: even full overlap waits for it.
  const par::StepProjection q = par::project_step(0.001, 1e9, 2, 10.0);
  EXPECT_DOUBLE_EQ(q.comm_s, 0.1);
  EXPECT_DOUBLE_EQ(q.step_full_overlap_s, 0.1);
  EXPECT_DOUBLE_EQ(q.efficiency_full_overlap, 0.01);
  EXPECT_THROW(par::project_step(0.0, 1e8, 8, 100.0), std::invalid_argument);
  EXPECT_THROW(par::project_step(0.01, 1e8, 1, 100.0), std::invalid_argument);
  EXPECT_THROW(par::project_step(0.01, 1e8, 8, 0.0), std::invalid_argument);
  EXPECT_THROW(par::project_step(0.01, 0.0, 8, 100.0), std::invalid_argument);
}

// NCCL refuses two ranks on one GPU: a rank needs a GPU of its own, and says why when it has none.
TEST(Nccl, OneGpuPerRank) {
  EXPECT_EQ(par::nccl::device_shortage(0, 1, 1), "");
  EXPECT_EQ(par::nccl::device_shortage(1, 2, 2), "");
  EXPECT_EQ(par::nccl::device_shortage(7, 8, 8), "");
  EXPECT_NE(par::nccl::device_shortage(0, 1, 0).find("no usable GPU"), std::string::npos);
  const std::string why = par::nccl::device_shortage(1, 2, 1);
  EXPECT_NE(why.find("2 ranks on this host but 1 GPU"), std::string::npos) << why;
}
