// GPU tests of the transfer family: every copy kind and direction byte-exact, pinning, batching,
// overlap and the loader with a GPU consumer. Skipped (exit 77) where there is no usable GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/transfer/gpu_timing.h"
#include "gtb/gtb.h"
#include "kernels/transfer/cpu/transfer.h"
#include "kernels/transfer/cuda/loader.h"
#include "kernels/transfer/cuda/transfer.h"
#include "kernels/transfer/transfer.h"
#include "tests/gpu/under_tool.h"

namespace gt = gtb::cuda::transfer;
namespace tt = gtb::transfer_timing;

using gtb::testing::under_tool;

namespace {

struct CopyParam {
  gt::Direction dir;
  gt::MemoryKind kind;
};
class TransferCopy : public testing::TestWithParam<CopyParam> {};
}  // namespace

TEST_P(TransferCopy, ByteExactAtOddAndLargeSizes) {
  for (std::size_t n : {std::size_t(1), std::size_t(4097), std::size_t(3) << 20}) {
    gt::CopyCase c(GetParam().dir, GetParam().kind, n);
    const auto rep = c.verify();
    EXPECT_TRUE(rep.ok) << rep.detail << " at " << n << " bytes";
    EXPECT_GT(tt::copy_device(c, 3), 0.0);
    EXPECT_GT(tt::copy_host(c, 3), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, TransferCopy,
    testing::Values(CopyParam{gt::Direction::h2d, gt::MemoryKind::pageable}, CopyParam{gt::Direction::h2d, gt::MemoryKind::pinned},
                    CopyParam{gt::Direction::h2d, gt::MemoryKind::registered},
                    CopyParam{gt::Direction::h2d, gt::MemoryKind::write_combined},
                    CopyParam{gt::Direction::d2h, gt::MemoryKind::pageable}, CopyParam{gt::Direction::d2h, gt::MemoryKind::pinned},
                    CopyParam{gt::Direction::d2h, gt::MemoryKind::registered},
                    CopyParam{gt::Direction::bidir, gt::MemoryKind::pageable},
                    CopyParam{gt::Direction::bidir, gt::MemoryKind::pinned},
                    CopyParam{gt::Direction::bidir, gt::MemoryKind::registered}));

TEST(TransferCopyErrors, BadRequestsAreClearErrors) {
  EXPECT_THROW(gt::CopyCase(gt::Direction::d2h, gt::MemoryKind::write_combined, 4096), std::invalid_argument);
  EXPECT_THROW(gt::CopyCase(gt::Direction::h2d, gt::MemoryKind::pinned, 0), std::invalid_argument);
  EXPECT_THROW(gt::memory_kind_from_string("unified"), std::invalid_argument);
  // A device allocation far beyond the device is an out-of-memory status, not a crash.
  if (under_tool()) GTEST_SKIP() << "a deliberately failing cudaMalloc is an error report under compute-sanitizer";
  EXPECT_THROW(gtb::cuda::DeviceBuffer(std::size_t(1) << 50), gtb::OutOfMemory);
  (void)cudaGetLastError();  // the failed cudaMalloc must not surface at the next launch check
}

TEST(TransferPin, BothMethodsPinAndTime) {
  for (auto m : {gt::PinMethod::host_alloc, gt::PinMethod::host_register}) {
    gt::PinCase c(m, 8 << 20);
    const auto rep = c.verify();
    EXPECT_TRUE(rep.ok) << rep.detail;
    EXPECT_GT(gtb::batch_seconds(2, [&] { c.run_once(); }), 0.0);
  }
}

TEST(TransferBatching, EveryMethodDeliversThePackedBatch) {
  for (auto m : {gt::BatchMethod::per_sample, gt::BatchMethod::pack_then_copy, gt::BatchMethod::prepacked,
                 gt::BatchMethod::memcpy_batch}) {
    if (m == gt::BatchMethod::memcpy_batch && !gt::memcpy_batch_available()) continue;
    gt::BatchingCase c(m, 37, 1000);
    const auto rep = c.verify();
    EXPECT_TRUE(rep.ok) << rep.detail << " method " << int(m);
    EXPECT_GT(gtb::batch_seconds(2, [&] { c.run_once(); }), 0.0);
  }
}

TEST(TransferOverlap, PipelineIsCorrectAndStreamsHelp) {
  EXPECT_GE(gt::async_engine_count(), 1);
  gt::OverlapConfig cfg{4 << 20, 8, 1, 1.0};
  gt::OverlapCase serial(cfg, gtb::cuda::event_timer());
  EXPECT_GE(serial.iters(), 1);
  EXPECT_TRUE(serial.verify().ok);
  cfg.streams = 3;
  gt::OverlapCase overlapped(cfg, gtb::cuda::event_timer());
  const auto rep = overlapped.verify();
  EXPECT_TRUE(rep.ok) << rep.detail;
  EXPECT_THROW(gt::OverlapCase({4 << 20, 8, 0, 1.0}, gtb::cuda::event_timer()), std::invalid_argument);
  const double t1 = tt::overlap_device(serial, 3) / 3, t3 = tt::overlap_device(overlapped, 3) / 3;
  const double f = gtb::transfer::overlap_fraction(tt::overlap_copy_only(overlapped), tt::overlap_compute_only(overlapped), t3);
  if (under_tool()) GTEST_SKIP() << "timings under an injected tool (compute-sanitizer, profiler) say nothing";
  // Copies and compute of similar length: three streams must beat one clearly (ideal ~1.5-2x).
  EXPECT_LT(t3, 0.9 * t1);
  EXPECT_GT(f, 0.2);
}

TEST(TransferGpuLoader, DeliversEveryBatchAndShowsStarvedAndFed) {
  const std::size_t bytes = 256 << 10;
  auto run_with = [&](int workers, gt::MemoryKind kind) {
    gt::GpuLoaderConfig cfg;
    cfg.loader = {workers, 8, 24};
    cfg.memory = kind;
    cfg.batch_bytes = bytes;
    cfg.kernel_seconds = 1e-3;
    gt::GpuLoader loader(cfg);
    return loader.run([&](std::int64_t b, void* slot) {
      gtb::cpu::fill_batch(slot, bytes, 5, std::uint64_t(b));
      gtb::cpu::sleep_for(6e-3);  // 6 ms per batch per worker vs a 1 ms kernel
    });
  };
  for (auto kind : {gt::MemoryKind::pinned, gt::MemoryKind::pageable}) {
    const auto starved = run_with(1, kind);
    const auto fed = run_with(12, kind);
    ASSERT_EQ(starved.checksums.size(), 24u);
    ASSERT_EQ(fed.checksums.size(), 24u);
    for (std::size_t b = 0; b < 24; ++b) {
      EXPECT_EQ(starved.checksums[b], gtb::cpu::expected_batch_checksum(bytes, 5, b));
      EXPECT_EQ(fed.checksums[b], gtb::cpu::expected_batch_checksum(bytes, 5, b));
    }
    if (under_tool()) continue;  // idle fractions and spans under an injected tool say nothing
    EXPECT_GT(starved.gpu_idle_fraction, 0.5);
    EXPECT_LT(fed.gpu_idle_fraction, 0.3);
    EXPECT_GT(starved.seconds, 2.0 * fed.seconds);
  }
  gt::GpuLoaderConfig bad;
  bad.loader = {1, 2, 4};
  bad.batch_bytes = 1024;
  bad.memory = gt::MemoryKind::registered;
  EXPECT_THROW(gt::GpuLoader{bad}, std::invalid_argument);
}
