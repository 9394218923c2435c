// Parallel family (GPU): NCCL collectives over every local GPU checked against the float64 sum;
// skipped where there is no GPU or no NCCL.
#include <gtest/gtest.h>

#include "harness/gpu.h"
#include "harness/host_timing.h"
#include "kernels/parallel/cpu/comm.h"
#include "kernels/parallel/cuda/nccl.h"

namespace par = gtb::parallel;

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = gtb::gpu::unavailable_reason()) GTEST_SKIP() << *why;
    if (!par::nccl::built()) GTEST_SKIP() << "built without NCCL";
  }
};

TEST_F(Nccl, EveryCollectiveChecksAndTimes) {
  for (auto c : {par::Collective::all_reduce, par::Collective::reduce_scatter, par::Collective::all_gather})
    for (auto dt : {par::nccl::DType::fp32, par::nccl::DType::bf16}) {
      par::nccl::LocalGroup g(c, 1 << 20, dt, 42);
      EXPECT_GE(g.ranks(), 1);
      const auto r = g.run_and_check();
      EXPECT_TRUE(r.ok) << par::to_string(c) << ": " << r.detail;
      g.sync();
      const double s = gtb::time_host(3, [&] { g.enqueue(1); }, [&] { g.sync(); });
      EXPECT_GT(s, 0.0);
      EXPECT_GT(g.bytes(), 0u);
    }
}

TEST_F(Nccl, SizeBelowOneElementPerGpuIsUnavailable) {
  EXPECT_THROW(par::nccl::LocalGroup(par::Collective::all_reduce, 2, par::nccl::DType::fp32, 1), par::Unavailable);
}
