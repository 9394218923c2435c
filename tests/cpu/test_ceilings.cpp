// CPU ceiling kernels against their references.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/ceilings/cpu/fma_peak.h"
#include "kernels/ceilings/cpu/stream.h"
#include "kernels/ceilings/stream.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"

namespace {

using gtb::cpu::Stores;

std::vector<double> triad_ref(const float* b, const float* c, std::size_t n) {
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]);
  return ref;
}

}  // namespace

TEST(Ceilings, AlignedArraysAre64ByteAligned) {
  for (std::size_t n : {1u, 17u, 100003u}) {
    auto p = gtb::cpu::alloc_floats(n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.get()) % 64, 0u) << n;
  }
}

TEST(Ceilings, CopyMatchesSourceAtOddSize) {
  const std::size_t n = 100003;
  for (Stores s : {Stores::plain, Stores::nontemporal}) {
    std::vector<float> a(n), b(n), c(n);
    gtb::cpu::stream_init(a.data(), b.data(), c.data(), n, 7);
    gtb::poison(a.data(), n);
    gtb::cpu::stream_copy(a.data(), b.data(), n, s);
    EXPECT_TRUE(gtb::compare_bytes(a.data(), b.data(), n * sizeof(float)).ok) << gtb::cpu::to_string(s);
  }
}

TEST(Ceilings, TriadMatchesFloat64Reference) {
  const std::size_t n = 77777;
  for (Stores s : {Stores::plain, Stores::nontemporal}) {
    auto a = gtb::cpu::alloc_floats(n), b = gtb::cpu::alloc_floats(n), c = gtb::cpu::alloc_floats(n);
    gtb::cpu::stream_init(a.get(), b.get(), c.get(), n, 9);
    gtb::poison(a.get(), n);
    gtb::cpu::stream_triad(a.get(), b.get(), c.get(), 3.0f, n, s);
    const auto rep = gtb::compare_elementwise(a.get(), triad_ref(b.get(), c.get(), n).data(), n, 1e-6, 0.0);
    EXPECT_TRUE(rep.ok) << gtb::cpu::to_string(s) << ": " << rep.detail;
  }
}

TEST(Ceilings, InitGivesNoZerosAndDistinctArrays) {
  const std::size_t n = 4096;
  std::vector<float> a(n), b(n), c(n);
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n, 3);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NE(b[i], 0.0f);
    ASSERT_NE(c[i], 0.0f);
  }
  EXPECT_NE(b, c);
}

TEST(Ceilings, ThreadsReportsAllOpenMPThreads) { EXPECT_GE(gtb::cpu::stream_threads(), 1); }

TEST(Ceilings, StreamingPathsMatchAtUnalignedStartsAndOddSizes) {
  // The output starting 1..15 floats past a cache line: the non-temporal path's scalar head and tail.
  const std::size_t n = (std::size_t(1) << 18) + 7;
  std::vector<float> a(n + 16), b(n + 16), c(n + 16);
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n + 16, 11);
  const std::vector<double> ref = triad_ref(b.data(), c.data(), n);
  for (std::size_t off : {0u, 1u, 3u, 8u, 15u})
    for (Stores s : {Stores::plain, Stores::nontemporal}) {
      gtb::poison(a.data() + off, n);
      gtb::cpu::stream_copy(a.data() + off, b.data(), n, s);
      ASSERT_TRUE(gtb::compare_bytes(a.data() + off, b.data(), n * sizeof(float)).ok) << "offset " << off;
      gtb::poison(a.data() + off, n);
      gtb::cpu::stream_triad(a.data() + off, b.data(), c.data(), 3.0f, n, s);
      const auto rep = gtb::compare_elementwise(a.data() + off, ref.data(), n, 1e-6, 0.0);
      ASSERT_TRUE(rep.ok) << "offset " << off << " " << gtb::cpu::to_string(s) << ": " << rep.detail;
    }
}

TEST(Ceilings, FmaKernelsAreBitExactAgainstTheScalarRecurrence) {
  using gtb::cpu::FmaIsa;
  int ran = 0;
  for (FmaIsa isa : {FmaIsa::avx512, FmaIsa::avx2, FmaIsa::baseline}) {
    if (!gtb::cpu::fma_isa_supported(isa)) continue;
    ++ran;
    const int threads = 2;
    const std::size_t count = std::size_t(threads) * gtb::cpu::kFmaChains * std::size_t(gtb::cpu::fma_lanes(isa));
    std::vector<float> got(count);
    gtb::fill_uniform(got.data(), count, 5, 0.5f, 1.5f);
    std::vector<float> ref = got;
    const double flops = gtb::cpu::fma_peak_run(isa, got.data(), threads, 300, 0.9999f, 1e-4f);
    gtb::cpu::fma_peak_reference(isa, ref.data(), count, 300, 0.9999f, 1e-4f);
    EXPECT_EQ(flops, 2.0 * double(count) * 300);
    EXPECT_TRUE(gtb::compare_bytes(got.data(), ref.data(), count * sizeof(float)).ok) << int(isa);
    // A kernel that did nothing would leave the inputs: the recurrence moves every value.
    std::vector<float> init(count);
    gtb::fill_uniform(init.data(), count, 5, 0.5f, 1.5f);
    for (std::size_t i = 0; i < count; ++i) ASSERT_NE(got[i], init[i]) << i;
  }
#if defined(__x86_64__)
  EXPECT_GE(ran, 1);  // the SSE2 baseline runs on every x86-64 CPU
#endif
}

TEST(Ceilings, FmaIsaNamesAndBadInput) {
  EXPECT_EQ(gtb::cpu::fma_isa_from_string("avx2"), gtb::cpu::FmaIsa::avx2);
  EXPECT_THROW(gtb::cpu::fma_isa_from_string("avx"), std::invalid_argument);
  EXPECT_EQ(gtb::cpu::fma_lanes(gtb::cpu::FmaIsa::avx512), 16);
  float x = 1;
  EXPECT_THROW(gtb::cpu::fma_peak_run(gtb::cpu::FmaIsa::baseline, &x, 0, 1, 1.0f, 0.0f), std::invalid_argument);
}
