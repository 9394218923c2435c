// oneMKL as a CPU GEMM library: bfloat16 rounding, MKL's SGEMM and BF16 GEMM against float64, its
// symbols kept out of the process's namespace, and a clear skip where it is not there.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <omp.h>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/mkl.h"
#include "kernels/common/errors.h"
#include "kernels/common/random.h"
#include "tests/common/gemm_f64.h"

namespace mkl = gtb::cpu::mkl;
using gtb::test::gemm_operands;
using gtb::test::worst_relative;

namespace {
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

TEST(GemmBf16, RoundsToNearestEvenAndKeepsSpecials) {
  EXPECT_EQ(gtb::cpu::to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(gtb::cpu::to_bf16(-2.0f), 0xc000);
  // Exactly halfway between two bfloat16 values: to the even one, up or down.
  EXPECT_EQ(gtb::cpu::to_bf16(from_bits(0x3f808000u)), 0x3f80);
  EXPECT_EQ(gtb::cpu::to_bf16(from_bits(0x3f818000u)), 0x3f82);
  // Past halfway rounds up, short of it down.
  EXPECT_EQ(gtb::cpu::to_bf16(from_bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(gtb::cpu::to_bf16(from_bits(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(gtb::cpu::to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(gtb::cpu::from_bf16(gtb::cpu::to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits in the low half must not round into infinity.
  EXPECT_TRUE(std::isnan(gtb::cpu::from_bf16(gtb::cpu::to_bf16(from_bits(0x7f800001u)))));
  // The largest finite float rounds to infinity, as IEEE rounding to a narrower format does.
  EXPECT_EQ(gtb::cpu::to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  std::vector<float> x(1000);
  gtb::fill_normal(x.data(), x.size(), 5);
  for (float v : x) {
    const float r = gtb::cpu::from_bf16(gtb::cpu::to_bf16(v));
    EXPECT_LE(std::fabs(r - v), std::ldexp(std::fabs(v), -8)) << v;  // unit roundoff of 8 significant bits
    EXPECT_EQ(bits(r) & 0xffffu, 0u);
  }
}

TEST(GemmBf16, RowsConversionHonoursTheStride) {
  const std::vector<float> src = {1, 2, 3, -7, 4, 5, 6, -7};  // 2 x 3 inside rows of 4
  std::vector<std::uint16_t> dst(6, 0xffff);
  gtb::cpu::to_bf16_rows(src.data(), 2, 3, 4, dst.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(gtb::cpu::from_bf16(dst[std::size_t(i)]), float(i + 1)) << i;
}

TEST(GemmMkl, UnavailableIsASkipWithTheReason) {
  if (mkl::available()) {
    EXPECT_TRUE(mkl::built());
    EXPECT_EQ(mkl::unavailable_reason(), "");
    EXPECT_TRUE(gtb::cpu::gemm_lib_available(gtb::cpu::GemmLib::mkl));
    EXPECT_EQ(mkl::version().rfind("oneMKL ", 0), 0u) << mkl::version();
    EXPECT_NO_THROW(mkl::require());
    return;
  }
  const std::string why = mkl::unavailable_reason();
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(gtb::cpu::gemm_lib_available(gtb::cpu::GemmLib::mkl));
  EXPECT_EQ(mkl::version(), "");
  float x = 1, y = 1, z = 0;
  try {
    gtb::cpu::sgemm(gtb::cpu::GemmLib::mkl, false, false, 1, 1, 1, 1.0f, &x, 1, &y, 1, 0.0f, &z, 1);
    ADD_FAILURE() << "an MKL call without MKL returned";
  } catch (const gtb::Skip& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  GTEST_SKIP() << why;
}

TEST(GemmMkl, ThreadsFollowTheSharedSetting) {
  if (!mkl::available()) GTEST_SKIP() << mkl::unavailable_reason();
  const int before = mkl::threads();
  EXPECT_GE(before, 1);
  gtb::cpu::set_blas_threads(1);
  EXPECT_EQ(mkl::threads(), 1);
  gtb::cpu::set_blas_threads(before);
  EXPECT_EQ(mkl::threads(), before);
  EXPECT_EQ(mkl::threading(), "gnu_thread (the process's libgomp)");
}

TEST(GemmMkl, OpenBlasStillAnswersTheProcessCblasCalls) {
  if (!mkl::available()) GTEST_SKIP() << mkl::unavailable_reason();
  // Both libraries export cblas_sgemm. MKL's layers are loaded after OpenBLAS, so the process's
  // lookup (every caller of OpenBLAS) must still find OpenBLAS's, while MKL's is reached only
  // through its handle.
  void* sym = dlsym(RTLD_DEFAULT, "cblas_sgemm");
  ASSERT_NE(sym, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(sym, &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("openblas"), std::string::npos) << info.dli_fname;
  EXPECT_NE(gtb::cpu::blas_config().find("OpenBLAS"), std::string::npos);
}

TEST(GemmMkl, SgemmAndBf16GemmMatchFloat64InEveryTransposeCase) {
  if (!mkl::available()) GTEST_SKIP() << mkl::unavailable_reason();
  const int m = 37, n = 29, k = 300;
  const std::size_t na = std::size_t(std::max(m, k)) * std::size_t(std::max(m, k));
  const std::size_t nb = std::size_t(std::max(n, k)) * std::size_t(std::max(n, k));
  const auto [a, b, a16, b16, ad, bd, ar, br] = gemm_operands(na, nb, 21, 22);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
      const int lda = ta ? m : k, ldb = tb ? k : n;
      std::vector<float> c(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
      mkl::sgemm(ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), n);
      EXPECT_LT(worst_relative(c, n, ad, bd, m, n, k, ta, tb), 1e-5);
      std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
      mkl::gemm_bf16(ta, tb, m, n, k, 1.0f, a16.data(), lda, b16.data(), ldb, 0.0f, c.data(), n);
      // Exact products of the rounded operands, accumulated in FP32.
      EXPECT_LT(worst_relative(c, n, ar, br, m, n, k, ta, tb), 1e-5);
      // Against the unrounded operands the BF16 rounding shows, within twice its unit roundoff.
      const double vs_fp32 = worst_relative(c, n, ad, bd, m, n, k, ta, tb);
      EXPECT_GT(vs_fp32, 5e-5);
      EXPECT_LT(vs_fp32, 2.0 * std::ldexp(1.0, -8));
      // beta = 1 accumulates into C.
      std::vector<float> twice = c;
      mkl::gemm_bf16(ta, tb, m, n, k, 1.0f, a16.data(), lda, b16.data(), ldb, 1.0f, twice.data(), n);
      for (std::size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(twice[i], 2 * c[i], 1e-4 * (1 + std::fabs(c[i])));
    }
}

// A scope sets the BLAS threads and gives back the count it found, OneMKL or not.
TEST(BlasThreads, AScopeRestoresTheCountItFound) {
  const int before = gtb::cpu::blas_threads();
  gtb::cpu::set_blas_threads(2);  // a count other than the scope's, on any machine
  ASSERT_EQ(gtb::cpu::blas_threads(), 2);
  {
    const gtb::cpu::BlasThreadsScope one(1);
    EXPECT_EQ(gtb::cpu::blas_threads(), 1);
  }
  EXPECT_EQ(gtb::cpu::blas_threads(), 2);
  gtb::cpu::set_blas_threads(before);
}

// The BLAS thread count is the GEMMs' alone: OpenBLAS's OpenMP flavour would also set the process's
// OpenMP loops to it, and a single-threaded GEMM scope must leave them on all cores.
TEST(BlasThreads, OneBlasThreadLeavesTheOpenMpLoopsTheirThreads) {
  const int before_blas = gtb::cpu::blas_threads();
  const int before_omp = omp_get_max_threads();
  omp_set_num_threads(3);  // a count of its own, whatever the machine's cores
  {
    const gtb::cpu::BlasThreadsScope one(1);
    EXPECT_EQ(gtb::cpu::blas_threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 3);
    int team = 0;
#pragma omp parallel
#pragma omp single
    team = omp_get_num_threads();
    EXPECT_EQ(team, 3);
    // A GEMM in the scope still computes.
    const float a[4] = {1, 2, 3, 4};
    float c[4] = {-1, -1, -1, -1};
    gtb::cpu::sgemm(false, false, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
    EXPECT_FLOAT_EQ(c[0], 7.0f);
    EXPECT_FLOAT_EQ(c[3], 22.0f);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before_omp);
  gtb::cpu::set_blas_threads(before_blas);
}
