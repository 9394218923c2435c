// CPU ceiling kernels against their references.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/common/stream.h"
#include "kernels/common/verify.h"
#include "kernels/cpu/stream.h"

TEST(Ceilings, CopyMatchesSourceAtOddSize) {
  const std::size_t n = 100003;
  std::vector<float> a(n), b(n), c(n);
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n, 7);
  gtb::poison(a.data(), n);
  gtb::cpu::stream_copy(a.data(), b.data(), n);
  EXPECT_TRUE(gtb::compare_bytes(a.data(), b.data(), n * sizeof(float)).ok);
}

TEST(Ceilings, TriadMatchesFloat64Reference) {
  const std::size_t n = 77777;
  std::vector<float> a(n), b(n), c(n);
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n, 9);
  gtb::poison(a.data(), n);
  gtb::cpu::stream_triad(a.data(), b.data(), c.data(), 3.0f, n);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]);
  const auto rep = gtb::compare_elementwise(a.data(), ref.data(), n, 1e-6, 0.0);
  EXPECT_TRUE(rep.ok) << rep.detail;
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
  // Above the streaming threshold, with the output starting 1..3 floats past 16-byte alignment.
  const std::size_t n = (std::size_t(1) << 20) + 7;
  std::vector<float> a(n + 4), b(n + 4), c(n + 4);
  gtb::cpu::stream_init(a.data(), b.data(), c.data(), n + 4, 11);
  for (std::size_t off = 0; off < 4; ++off) {
    gtb::poison(a.data() + off, n);
    gtb::cpu::stream_copy(a.data() + off, b.data(), n);
    ASSERT_TRUE(gtb::compare_bytes(a.data() + off, b.data(), n * sizeof(float)).ok) << "offset " << off;
    gtb::poison(a.data() + off, n);
    gtb::cpu::stream_triad(a.data() + off, b.data(), c.data(), 3.0f, n);
    std::vector<double> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]);
    const auto rep = gtb::compare_elementwise(a.data() + off, ref.data(), n, 1e-6, 0.0);
    ASSERT_TRUE(rep.ok) << "offset " << off << ": " << rep.detail;
  }
}
