// Parallel family (GPU): NCCL collectives over every local GPU checked against the float64 sum, the
// data-parallel GPU step against a float64 step on the whole global batch, and backward alone beside
// a reduction; skipped where there is no GPU or no NCCL. The one-GPU step without communication needs
// no NCCL and runs wherever there is a GPU. Several ranks need several GPUs: that path is tested end
// to end by tests/driver/parallel.sh (nccl_two_ranks).
#include <gtest/gtest.h>

#include <cmath>

#include "gtb/gpu.h"
#include "gtb/host_timing.h"
#include "kernels/common/verify.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/cuda/mlp.h"
#include "kernels/parallel/comm.h"
#include "kernels/parallel/cuda/dp_step.h"
#include "kernels/parallel/cuda/nccl.h"

namespace par = gtb::parallel;
namespace mlp = gtb::mlp;

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = gtb::gpu::unavailable_reason()) GTEST_SKIP() << *why;
    if (!par::nccl::built()) GTEST_SKIP() << "built without NCCL";
  }
};
// The data-parallel step on one GPU with no communicator (Comms::solo): no NCCL call is made, so these
// run in a build without NCCL too.
class OneGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = gtb::gpu::unavailable_reason()) GTEST_SKIP() << *why;
  }
};

TEST_F(Nccl, EveryCollectiveChecksAndTimes) {
  for (auto c : {par::Collective::all_reduce, par::Collective::reduce_scatter, par::Collective::all_gather})
    for (auto dt : {par::nccl::DType::fp32, par::nccl::DType::bf16}) {
      par::nccl::LocalGroup g(c, 1 << 20, dt, 42);
      EXPECT_GE(g.ranks(), 1);
      EXPECT_EQ(g.ranks(), g.local_gpus());  // one process: every local GPU, no MPI
      const auto r = g.run_and_check();
      EXPECT_TRUE(r.ok) << par::to_string(c) << ": " << r.detail;
      g.sync();
      const double s = gtb::batch_seconds(3, [&] { g.enqueue(1); }, [&] { g.sync(); });
      EXPECT_GT(s, 0.0);
      EXPECT_GT(g.bytes(), 0u);
    }
}

TEST_F(Nccl, SizeBelowOneElementPerGpuIsUnavailable) {
  EXPECT_THROW(par::nccl::LocalGroup(par::Collective::all_reduce, 2, par::nccl::DType::fp32, 1), par::Unavailable);
}

TEST_F(Nccl, OneProcessDrivesEveryLocalGpu) {
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  const auto w = par::nccl::Comms::world();
  EXPECT_EQ(w->world_size(), gpus);
  EXPECT_EQ(w->local(), gpus);
  for (int i = 0; i < w->local(); ++i) {
    EXPECT_EQ(w->device(i), i);
    EXPECT_EQ(w->rank(i), i);
    EXPECT_NE(w->comm(i), nullptr);
  }
  EXPECT_EQ(par::nccl::Comms::this_process()->world_size(), gpus);
  const auto s = par::nccl::Comms::solo(0, 1);
  EXPECT_EQ(s->world_size(), 1);
  EXPECT_EQ(s->comm(0), nullptr);
}

namespace {
mlp::Config small_model() {
  mlp::Config c;
  c.input = c.width = 256;  // 256x256 floats: 0.25 MiB a layer, so 0.3 MiB caps give several buckets
  c.depth = 4;
  c.classes = 16;
  return c;
}
// Every local GPU's weights after one step against a float64 step on the whole global batch.
void expect_matches_reference(std::shared_ptr<const par::nccl::Comms> comms, bool overlap) {
  const mlp::Config c = small_model();
  const mlp::Layout lay(c);
  const int rows = 8, global = rows * comms->world_size();
  const mlp::Dataset d = mlp::make_clusters(global, c.input, c.classes, 11);
  const auto buckets = par::plan_buckets(lay, 0.3, 0.3);
  ASSERT_GE(buckets.size(), 3u);
  par::nccl::GpuDpMlp m(comms, c, rows, buckets, overlap, d.x.data(), d.y.data());
  const std::vector<float> p0 = m.params(0);
  m.poison();
  m.step();
  m.sync();
  const std::vector<double> pd(p0.begin(), p0.end()), od(lay.total, 0.0);
  const mlp::RefStep ref = mlp::reference_step(c, pd, od, 0, d.x.data(), d.y.data(), global);
  for (int i = 0; i < m.local(); ++i) {
    const std::vector<float> p = m.params(i);
    const auto e = gtb::compare_elementwise(p.data(), ref.params_after.data(), lay.total, 1e-5, 1e-6);
    EXPECT_TRUE(e.ok) << "GPU " << i << " overlap " << overlap << ": " << e.detail;
    EXPECT_NE(p, p0);
  }
  // Timed steps: phases are positive and inside the step.
  m.set_params(p0);
  const par::nccl::GpuStepTimes t = m.time_steps(3);
  EXPECT_GT(t.step_s, 0.0);
  EXPECT_GT(t.last_step_s, 0.0);
  EXPECT_LE(t.last_step_s, t.step_s);
  EXPECT_GT(t.backward_s, 0.0);
  EXPECT_GE(t.comm_s, 0.0);
  EXPECT_LE(t.backward_s, t.last_step_s);  // maxima over GPUs: each phase fits in the slowest step
  EXPECT_LE(t.comm_s, t.last_step_s);
}
}  // namespace

TEST_F(Nccl, DataParallelStepMatchesFloat64WithoutOverlap) {
  expect_matches_reference(par::nccl::Comms::world(), false);
}
TEST_F(Nccl, DataParallelStepMatchesFloat64WithOverlap) { expect_matches_reference(par::nccl::Comms::world(), true); }
TEST_F(OneGpu, DataParallelStepWithoutCommunicationMatchesFloat64) {
  expect_matches_reference(par::nccl::Comms::solo(0, 1), false);
}

TEST_F(OneGpu, DataParallelStepRejectsBadInput) {
  const auto comms = std::shared_ptr<const par::nccl::Comms>(par::nccl::Comms::solo(0, 1));
  mlp::Config c = small_model();
  const mlp::Layout lay(c);
  const mlp::Dataset d = mlp::make_clusters(8, c.input, c.classes, 1);
  const auto b = par::plan_buckets(lay, 1.0, 1.0);
  EXPECT_THROW(par::nccl::GpuDpMlp(comms, c, 0, b, false, d.x.data(), d.y.data()), std::invalid_argument);
  EXPECT_THROW(par::nccl::GpuDpMlp(comms, c, 8, {}, false, d.x.data(), d.y.data()), std::invalid_argument);
  c.optim = mlp::Optim::adam;
  EXPECT_THROW(par::nccl::GpuDpMlp(comms, c, 8, b, false, d.x.data(), d.y.data()), std::invalid_argument);
}

// The step in phases is the step: forward + backward + update gives step()'s weights, and backward
// repeated from one forward gives the same weight gradients (what the interference record times),
// also with a bucket-sized all-reduce in flight on another stream.
TEST_F(Nccl, BackwardAloneBesideAReduction) {
  namespace gm = gtb::cuda::mlp;
  const mlp::Config c = small_model();
  const mlp::Layout lay(c);
  const mlp::Dataset d = mlp::make_clusters(32, c.input, c.classes, 3);
  gm::GpuMlp whole(c, 32, 1, gm::Precision::fp32), phased(c, 32, 1, gm::Precision::fp32);
  whole.load_data(d.x.data(), d.y.data(), gm::DataSource::device);
  phased.load_data(d.x.data(), d.y.data(), gm::DataSource::device);
  whole.step();
  phased.forward(0);
  phased.backward(0);
  phased.update();
  // Bias gradients are summed with atomics, so the last bits may differ between two models.
  const std::vector<float> pw = whole.params(), pp = phased.params();
  for (std::size_t k = 0; k < pw.size(); ++k) ASSERT_NEAR(pp[k], pw[k], 1e-6 * std::fabs(pw[k]) + 1e-9) << k;
  // The train family's launches per step are unchanged by the split: the bias clear, 2L forward, 3L-2
  // backward and one update.
  EXPECT_EQ(whole.launches_per_step(), 5 * c.depth);

  phased.forward(0);
  phased.backward(0);
  const std::vector<float> ga = phased.grads();
  par::nccl::LocalGroup g(par::Collective::all_reduce, 25u << 20, par::nccl::DType::fp32, 5);
  ASSERT_TRUE(g.run_and_check().ok);
  phased.forward(0);
  g.enqueue(4);
  phased.backward(0);
  phased.sync();
  g.sync();
  const std::vector<float> gb = phased.grads();
  // Weight gradients: the same GEMMs on the same data; a reduction beside them must not change them.
  for (int l = 1; l <= lay.layers(); ++l) {
    const auto L = std::size_t(l);
    for (std::size_t k = 0; k < std::size_t(lay.dims[L - 1]) * std::size_t(lay.dims[L]); ++k) {
      const float a = ga[lay.w[L - 1] + k], b = gb[lay.w[L - 1] + k];
      ASSERT_TRUE(std::isfinite(a)) << "layer " << l << " element " << k;
      ASSERT_NEAR(b, a, 1e-6 * std::fabs(a) + 1e-12) << "layer " << l << " element " << k;
    }
  }
}
