// CPU ceiling kernels against their references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <cstdint>
#include <vector>

#include "bench/ceilings/sizes.h"
#include "gtb/context.h"
#include "kernels/ceilings/cpu/fma_peak.h"
#include "kernels/ceilings/cpu/stream.h"
#include "kernels/ceilings/stream.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/common/openmp_threads.h"

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

TEST(Ceilings, ThreadsReportsAllOpenMPThreads) {
  EXPECT_TRUE(gtb_test::follows_openmp_threads([] { return gtb::cpu::stream_threads(); }));
}

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
  ASSERT_GE(ran, 1) << "the SSE2 baseline runs on every x86-64 CPU";
#endif
  // Elsewhere no kernel exists yet: nothing was compared, which is Skipped, never a pass.
  if (ran == 0) GTEST_SKIP() << "no FMA kernel runs on this CPU (the kernels are x86-64 only)";
}

TEST(Ceilings, FmaIsaNamesAndBadInput) {
  EXPECT_EQ(gtb::cpu::fma_isa_from_string("avx2"), gtb::cpu::FmaIsa::avx2);
  EXPECT_THROW(gtb::cpu::fma_isa_from_string("avx"), std::invalid_argument);
  EXPECT_EQ(gtb::cpu::fma_lanes(gtb::cpu::FmaIsa::avx512), 16);
  float x = 1;
  EXPECT_THROW(gtb::cpu::fma_peak_run(gtb::cpu::FmaIsa::baseline, &x, 0, 1, 1.0f, 0.0f), std::invalid_argument);
}

// ---- the host sizes chosen from the machine (bench/ceilings/sizes.h), on injected machines ----

namespace {
constexpr long long kMiBll = 1ll << 20;
constexpr long long kGiB = 1ll << 30;
// The smallest working set (the copy's two arrays) of the ceiling size must not be cache-resident.
void expect_streams_out_of_cache(const gtb::ceilings::HostStreamSizes& s, long long llc) {
  ASSERT_GT(s.ceiling_bytes, 0) << s.missing;
  EXPECT_TRUE(s.missing.empty()) << s.missing;
  EXPECT_FALSE(gtb::cache_resident(2.0 * double(s.ceiling_bytes), llc)) << s.ceiling_bytes << " vs " << llc;
  EXPECT_EQ(s.quick.back(), s.ceiling_bytes);  // the quick suite's largest size is the ceiling's
  for (const auto* v : {&s.quick, &s.full}) {
    EXPECT_NE(std::find(v->begin(), v->end(), s.ceiling_bytes), v->end());
    EXPECT_TRUE(std::is_sorted(v->begin(), v->end()));
  }
}
}  // namespace

TEST(CeilingSizes, SmallCacheKeepsTheUsualSizes) {
  const auto s = gtb::ceilings::host_stream_sizes(32 * kMiBll, 24 * kGiB);
  expect_streams_out_of_cache(s, 32 * kMiBll);
  EXPECT_EQ(s.quick, (std::vector<std::int64_t>{64 * kMiBll, 256 * kMiBll}));
  EXPECT_EQ(s.full, (std::vector<std::int64_t>{16 * kMiBll, 64 * kMiBll, 256 * kMiBll, 1024 * kMiBll}));
}

TEST(CeilingSizes, A480MiBCacheGetsArraysThatStreamFromMemory) {
  // A server CPU (or a VM reporting its host's L3): 256 MiB arrays would all be cache-resident.
  const long long llc = 480 * kMiBll;
  EXPECT_TRUE(gtb::cache_resident(2.0 * 256 * kMiBll, llc));
  const auto s = gtb::ceilings::host_stream_sizes(llc, 24 * kGiB);
  expect_streams_out_of_cache(s, llc);
  EXPECT_EQ(s.ceiling_bytes, 1024 * kMiBll);
  EXPECT_EQ(s.quick.size(), 2u);
}

TEST(CeilingSizes, A1point5GiBCacheGetsLargerArraysStill) {
  const long long llc = 1536 * kMiBll;
  const auto s = gtb::ceilings::host_stream_sizes(llc, 64 * kGiB);
  expect_streams_out_of_cache(s, llc);
  EXPECT_EQ(s.ceiling_bytes, 3 * kGiB);
  EXPECT_EQ(s.full.back(), 3 * kGiB);
}

TEST(CeilingSizes, TooLittleMemorySaysWhyTheCeilingIsMissing) {
  // 1.5 GiB of cache, 8 GiB free: three 3 GiB arrays do not fit in half of it.
  const auto s = gtb::ceilings::host_stream_sizes(1536 * kMiBll, 8 * kGiB);
  EXPECT_EQ(s.ceiling_bytes, 0);
  EXPECT_NE(s.missing.find("3072 MiB"), std::string::npos) << s.missing;
  EXPECT_NE(s.missing.find("1536 MiB last-level cache"), std::string::npos) << s.missing;
  // What is measured still fits: three arrays of the largest size within half of the memory.
  for (auto b : s.full) EXPECT_LE(3.0 * double(b), 0.5 * 8.0 * double(kGiB)) << b;
  EXPECT_FALSE(s.quick.empty());
}

TEST(CeilingSizes, UnknownCacheOrMemory) {
  const auto s = gtb::ceilings::host_stream_sizes(0, 0);
  EXPECT_EQ(s.ceiling_bytes, 256 * kMiBll);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_FALSE(gtb::cache_resident(1e12, 0));  // an unknown cache never makes a size resident
}

TEST(CeilingSizes, CacheResidentRuleAtItsBoundary) {
  const long long llc = 100 * kMiBll;
  EXPECT_TRUE(gtb::cache_resident(4.0 * double(llc) - 1, llc));
  EXPECT_FALSE(gtb::cache_resident(4.0 * double(llc), llc));
}

TEST(CeilingSizes, InjectedLastLevelCacheReplacesTheMachines) {
  ASSERT_EQ(setenv("GTB_CPU_LLC_BYTES", "503316480", 1), 0);
  const gtb::CpuCaches c = gtb::cpu_caches();
  EXPECT_EQ(c.injected_llc_bytes, 503316480);
  EXPECT_EQ(c.last_level_bytes(), 503316480);
  ASSERT_EQ(setenv("GTB_CPU_LLC_BYTES", "not a number", 1), 0);
  EXPECT_EQ(gtb::cpu_caches().injected_llc_bytes, 0);
  unsetenv("GTB_CPU_LLC_BYTES");
  EXPECT_EQ(gtb::cpu_caches().injected_llc_bytes, 0);
}

TEST(CeilingSizes, HostArraysAreSharedBySizeAndEvictedOldestFirst) {
  // The full suite's largest size evicts the others; the same path on a small budget here.
  gtb::ceilings::RecentBySize<int> cache(100.0);
  int made = 0;
  auto make = [&](std::size_t n) { return int(n) * 10 + ++made; };
  EXPECT_EQ(cache.get(1, 40, make), 11);
  EXPECT_EQ(cache.get(2, 40, make), 22);
  EXPECT_EQ(cache.get(1, 40, make), 11);  // shared, not made again; now the most recent
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cache.get(3, 40, make), 33);  // 120 > 100: the oldest (2) goes, 1 stays
  EXPECT_TRUE(cache.holds(1));
  EXPECT_FALSE(cache.holds(2));
  EXPECT_EQ(cache.get(4, 500, make), 44);  // larger than the budget: everything else goes, it still fits
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.holds(4));
  // A size that cannot be made leaves nothing behind.
  EXPECT_THROW(cache.get(5, 10, [](std::size_t) -> int { throw std::runtime_error("no memory"); }), std::runtime_error);
  EXPECT_FALSE(cache.holds(5));
}
