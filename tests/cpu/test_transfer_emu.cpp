// The transfer family's CUDA kernels (the loader consumer's checksum with its warp shuffles and
// atomics, the overlap workload's compute, the fixed-length spin), their own code run on CPU threads
// through the host stand-in of tests/cpu/cuda_emu (a device of two SMs, so the grid-stride loops
// stride), against the CPU checksum and a float64 overlap; a planted indexing error (a grid's last
// block run as block 0) must fail both checks.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in, and check.cpp's error path.
#include "kernels/common/cuda/check.cpp"
#include "kernels/transfer/cuda/transfer_kernels.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/transfer/cpu/transfer.h"

namespace {
namespace gt = gtb::cuda::transfer;

TEST(TransferKernelsEmulated, ChecksumIsTheCpuChecksum) {
  // 40000 words: 157 blocks wanted, 16 on the stand-in device; 5 tail bytes.
  const std::size_t bytes = 8 * 40000 + 5;
  std::vector<unsigned char> data(bytes);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& b : data) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<unsigned char>(x >> 56);
  }
  const std::uint64_t want = gtb::cpu::checksum_words(data.data(), bytes);
  for (bool plant : {false, true}) {
    unsigned long long sum = 17;  // accumulated into
    gtb_emu::plant_last_block_as_first = plant;
    gt::checksum_words(data.data(), bytes, &sum, nullptr);
    gtb_emu::plant_last_block_as_first = false;
    if (plant) {
      EXPECT_NE(sum, want + 17) << "the planted indexing error passed";
    } else {
      EXPECT_EQ(sum, want + 17);
    }
  }
}

TEST(TransferKernelsEmulated, OverlapComputeMatchesFloat64) {
  const std::size_t n = 30001;
  const int iters = 40;
  std::vector<float> in(n);
  gtb::fill_uniform(in.data(), n, 51, -2.0f, 2.0f);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = in[i];
    for (int k = 0; k < iters; ++k) v = v * 0.9990234375 + 0.0009765625;
    ref[i] = v;
  }
  for (bool plant : {false, true}) {
    std::vector<float> out(n);
    gtb::poison(out.data(), n);
    gtb_emu::plant_last_block_as_first = plant;
    gt::overlap_compute(in.data(), out.data(), n, iters, nullptr);
    gtb_emu::plant_last_block_as_first = false;
    const gtb::ErrorReport e = gtb::compare_elementwise(out.data(), ref.data(), n, 1e-5, 1e-6);
    if (plant) {
      EXPECT_FALSE(e.ok) << "the planted indexing error passed";
    } else {
      EXPECT_TRUE(e.ok) << e.detail;
    }
  }
}

TEST(TransferKernelsEmulated, SpinLastsItsLength) {
  const auto t0 = std::chrono::steady_clock::now();
  gt::spin_kernel(20'000'000, nullptr);  // 20 ms
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
}

}  // namespace
