// GPU ceiling kernels against the CPU (skipped without a GPU).
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtb/cuda_timing.h"
#include "harness/runtime/device_timing.h"
#include "harness/runtime/stopping.h"
#include "kernels/ceilings/cuda/ceilings.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/gpu/under_tool.h"

using gtb::testing::under_tool;

TEST(CeilingsGpu, TriadMatchesCpuIncludingTail) {
  for (std::size_t n : {std::size_t(1), std::size_t(1023), std::size_t(1 << 20) + 3}) {
    std::vector<float> b(n), c(n), a(n);
    gtb::fill_uniform(b.data(), n, 1);
    gtb::fill_uniform(c.data(), n, 2);
    gtb::cuda::DeviceBuffer da(n * 4), db(n * 4), dc(n * 4);
    GTB_CUDA_CHECK(cudaMemcpy(db.get(), b.data(), n * 4, cudaMemcpyHostToDevice));
    GTB_CUDA_CHECK(cudaMemcpy(dc.get(), c.data(), n * 4, cudaMemcpyHostToDevice));
    GTB_CUDA_CHECK(cudaMemset(da.get(), 0xFF, n * 4));
    gtb::cuda::stream_triad(da.as<float>(), db.as<float>(), dc.as<float>(), 3.0f, n, nullptr);
    GTB_CUDA_CHECK(cudaMemcpy(a.data(), da.get(), n * 4, cudaMemcpyDeviceToHost));
    std::vector<double> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]);
    const auto rep = gtb::compare_elementwise(a.data(), ref.data(), n, 1e-6, 0.0);
    EXPECT_TRUE(rep.ok) << "n=" << n << ": " << rep.detail;
  }
}

TEST(CeilingsGpu, EventTimingIsPositive) {
  gtb::cuda::Stream s;
  gtb::cuda::DeviceBuffer a(1 << 24), b(1 << 24);
  const double t = gtb::cuda::time_events(s.get(), 4, [&](cudaStream_t st) {
    GTB_CUDA_CHECK(cudaMemcpyAsync(a.get(), b.get(), 1 << 24, cudaMemcpyDeviceToDevice, st));
  });
  EXPECT_GT(t, 0.0);
}

// Many tiny copies, each shorter than its enqueue: held behind the blocking kernel, the events time
// the copies; the log says every sample was blocked, and no block timed out.
TEST(CeilingsGpu, BlockedRegionTimesTheDeviceNotTheHost) {
  gtb::cuda::Stream s;
  gtb::cuda::DeviceBuffer a(4096), b(4096);
  auto copy = [&](cudaStream_t st) { GTB_CUDA_CHECK(cudaMemcpyAsync(a.get(), b.get(), 4096, cudaMemcpyDeviceToDevice, st)); };
  gtb::DeviceTimingLog& log = gtb::device_timing_log();
  log.clear();
  for (int i = 0; i < 5; ++i) EXPECT_GT(gtb::cuda::time_events(s.get(), 100, copy), 0.0);
  const gtb::json j = log.summary(5);
  EXPECT_EQ(j["samples"].get<int>(), 5) << j.dump();
  EXPECT_GT(j["device_s_median"].get<double>(), 0.0);
  EXPECT_GT(j["enqueue_s_median"].get<double>(), 0.0);
  if (under_tool()) GTEST_SKIP() << "blocking-kernel timeouts under an injected tool (compute-sanitizer, profiler) say nothing";
  EXPECT_EQ(j["blocking_kernel"].get<std::string>(), "all") << j.dump();
  EXPECT_EQ(j["block_timeouts"].get<int>(), 0) << j.dump();
}

TEST(CeilingsGpu, ForbiddenBlockingIsNotHeld) {
  gtb::cuda::Stream s;
  std::vector<unsigned char> pageable(1 << 20, 7);
  gtb::cuda::DeviceBuffer d(1 << 20);
  gtb::DeviceTimingLog& log = gtb::device_timing_log();
  log.clear();
  const double t = gtb::cuda::time_events(
      s.get(), 2,
      [&](cudaStream_t st) {
        GTB_CUDA_CHECK(cudaMemcpyAsync(d.get(), pageable.data(), pageable.size(), cudaMemcpyHostToDevice, st));
      },
      {gtb::Blocking::forbidden, 1});
  EXPECT_GT(t, 0.0);
  const gtb::json j = log.summary(1);
  EXPECT_EQ(j["blocking_kernel"].get<std::string>(), "none") << j.dump();
  EXPECT_EQ(j["block_timeouts"].get<int>(), 0) << j.dump();
}

// An exception while the stream is held must release it: the stream is usable (and not stuck for
// the kernel's timeout) right after.
TEST(CeilingsGpu, RegionReleasesTheStreamOnException) {
  gtb::cuda::Stream s;
  const double t0 = gtb::host_seconds();
  EXPECT_THROW(gtb::cuda::time_events(s.get(), 1, [](cudaStream_t) { throw std::runtime_error("enqueue failed"); }),
               std::runtime_error);
  s.sync();
  const double held = gtb::host_seconds() - t0;
  if (under_tool()) GTEST_SKIP() << "how long the release took under an injected tool says nothing";
  EXPECT_LT(held, 0.5 * gtb::kBlockTimeoutSeconds);
}

TEST(CeilingsGpu, TriadOnUnalignedPointersFallsBackToScalar) {
  // Offsets of 1-3 floats break the float4 path's 16-byte alignment; the result must still be right
  // (and no misaligned-address fault, which would poison the context for every later test).
  const std::size_t n = (std::size_t(1) << 16) + 5;
  std::vector<float> b(n), c(n), a(n);
  gtb::fill_uniform(b.data(), n, 3);
  gtb::fill_uniform(c.data(), n, 4);
  gtb::cuda::DeviceBuffer da((n + 3) * 4), db((n + 3) * 4), dc((n + 3) * 4);
  float* pa = da.as<float>() + 1;
  float* pb = db.as<float>() + 2;
  float* pc = dc.as<float>() + 3;
  GTB_CUDA_CHECK(cudaMemcpy(pb, b.data(), n * 4, cudaMemcpyHostToDevice));
  GTB_CUDA_CHECK(cudaMemcpy(pc, c.data(), n * 4, cudaMemcpyHostToDevice));
  GTB_CUDA_CHECK(cudaMemset(pa, 0xFF, n * 4));
  gtb::cuda::stream_triad(pa, pb, pc, 3.0f, n, nullptr);
  GTB_CUDA_CHECK(cudaMemcpy(a.data(), pa, n * 4, cudaMemcpyDeviceToHost));
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]);
  const auto rep = gtb::compare_elementwise(a.data(), ref.data(), n, 1e-6, 0.0);
  EXPECT_TRUE(rep.ok) << rep.detail;
}
