// Tests of the GEMM family's CPU side: FLOPs and bytes, half/bf16 rounding, tolerances, the
// accuracy check (a planted wrong result must fail), OpenBLAS vs a float64 loop, tiles and waves,
// the datasheet table, the shape lists and the findings.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "bench/gemm/check.h"
#include "bench/gemm/findings.h"
#include "harness/model/cost_terms.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/random.h"
#include "kernels/gemm/cpu/gemm.h"
#include "kernels/gemm/cpu/gemm_dnnl.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/cuda/gemm_lt_choice.h"
#include "kernels/gemm/gemm_shapes.h"
#include "tests/common/named_record.h"
#include "tests/common/non_empty.h"

namespace g = gtb::gemm;
using g::Precision;

TEST(GemmMath, FlopCount) {
  EXPECT_DOUBLE_EQ(g::flops(1, 1, 1), 2.0);
  EXPECT_DOUBLE_EQ(g::flops(2, 3, 4), 48.0);
  EXPECT_DOUBLE_EQ(g::flops(4096, 4096, 4096), 2.0 * 4096.0 * 4096.0 * 4096.0);
  // No integer overflow at the largest shapes.
  EXPECT_DOUBLE_EQ(g::flops(16384, 65536, 16384), 2.0 * 16384.0 * 65536.0 * 16384.0);
}

TEST(GemmMath, OperandBytes) {
  EXPECT_DOUBLE_EQ(g::operand_bytes(Precision::fp32, 2, 3, 4), 4.0 * (8 + 12 + 6));
  EXPECT_DOUBLE_EQ(g::operand_bytes(Precision::tf32, 2, 3, 4), 4.0 * (8 + 12 + 6));
  EXPECT_DOUBLE_EQ(g::operand_bytes(Precision::bf16_fp32acc, 2, 3, 4), 2.0 * (8 + 12 + 6));
  EXPECT_DOUBLE_EQ(g::operand_bytes(Precision::fp16_fp16acc, 2, 3, 4), 2.0 * (8 + 12 + 6));
}

TEST(GemmMath, PrecisionNames) {
  for (Precision p : g::all_precisions()) EXPECT_EQ(g::precision_from_string(g::to_string(p)), p);
  EXPECT_THROW(g::precision_from_string("fp8"), std::invalid_argument);
  EXPECT_THROW(g::precision_from_string(""), std::invalid_argument);
  EXPECT_EQ(g::precision_names().size(), 5u);
}

TEST(GemmMath, Tf32OperandTruncatesOrRounds) {
  const float x = 1.0f + std::ldexp(1.0f, -10) + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20);
  EXPECT_EQ(gtb::tf32_operand(x), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(gtb::tf32_operand(-x), -(1.0f + std::ldexp(1.0f, -10)));
  EXPECT_EQ(gtb::tf32_operand(x, true), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(gtb::tf32_operand(3.0f), 3.0f);
  EXPECT_TRUE(std::isinf(gtb::tf32_operand(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(gtb::tf32_operand(std::numeric_limits<float>::quiet_NaN())));
}

// The tf32 tolerance (the gemm check's relative Frobenius error, the train step's elementwise error
// relative to the sum of |terms|) holds with a margin of at least 2 when the tensor cores truncate
// the operands: a float64 model of the product of truncated FP32 operands, at the deepest k the
// records check. Rounding to nearest errs less (the model tells them apart).
TEST(GemmMath, Tf32ToleranceHoldsForTruncatedOperands) {
  const int m = 48, n = 40, k = 8192;
  std::vector<float> a(std::size_t(m) * k), b(std::size_t(k) * n);
  gtb::fill_normal(a.data(), a.size(), 11, 1.0f);
  gtb::fill_normal(b.data(), b.size(), 12, 1.0f);
  auto model = [&](bool nearest, double& frob, double& elementwise) {
    double num = 0, den = 0;
    elementwise = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double exact = 0, got = 0, bound = 0;
        for (int p = 0; p < k; ++p) {
          const float x = a[std::size_t(i) * k + p], y = b[std::size_t(p) * n + j];
          exact += double(x) * y;
          got += double(gtb::tf32_operand(x, nearest)) * gtb::tf32_operand(y, nearest);
          bound += std::fabs(double(x) * y);
        }
        got = double(float(got));  // FP32 output
        num += (got - exact) * (got - exact), den += exact * exact;
        elementwise = std::max(elementwise, std::fabs(got - exact) / bound);
      }
    frob = std::sqrt(num / den);
  };
  double frob = 0, elem = 0, frob_nearest = 0, elem_nearest = 0;
  model(false, frob, elem);
  model(true, frob_nearest, elem_nearest);
  const double tol = g::tolerance(Precision::tf32, k);
  std::printf("tf32 model, k %d: relative Frobenius error %.2e truncated (%.2e rounded), elementwise %.2e of the sum of "
              "|terms|; tolerance %.2e\n", k, frob, frob_nearest, elem, tol);
  EXPECT_LE(2.0 * frob, tol);
  EXPECT_LE(2.0 * elem, tol);
  EXPECT_LE(elem, 2.0 * gtb::tf32_product_bias());  // the worst product's bound
  EXPECT_GT(frob, 0.25 * gtb::tf32_product_bias()) << "the model's operands were not truncated";
  EXPECT_LT(2.0 * frob_nearest, frob);
  EXPECT_EQ(tol, gtb::tf32_gemm_tolerance());
}

TEST(GemmMath, TolerancesOrderedByPrecision) {
  EXPECT_LT(g::tolerance(Precision::fp32, 4096), 1e-4);
  EXPECT_LT(g::tolerance(Precision::fp32, 4096), g::tolerance(Precision::tf32, 4096));
  for (Precision p : {Precision::tf32, Precision::fp16_fp32acc, Precision::bf16_fp32acc}) {
    EXPECT_GE(g::tolerance(p, 4096), 1e-3) << g::to_string(p);
    EXPECT_LE(g::tolerance(p, 4096), 5e-2) << g::to_string(p);
  }
  EXPECT_LE(g::tolerance(Precision::fp16_fp32acc, 4096), g::tolerance(Precision::bf16_fp32acc, 4096));
  // FP16 accumulation error grows with k; the bound grows with it but stays far below 1.
  EXPECT_LT(g::tolerance(Precision::fp16_fp16acc, 1024), g::tolerance(Precision::fp16_fp16acc, 65536));
  EXPECT_LT(g::tolerance(Precision::fp16_fp16acc, 65536), 0.2);
}

TEST(GemmMath, HalfRoundTrip) {
  EXPECT_EQ(g::float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(g::float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(g::float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(g::float_to_half(65520.0f), 0x7C00);  // tie at the top rounds to inf
  EXPECT_EQ(g::float_to_half(1e6f), 0x7C00);
  EXPECT_EQ(g::float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(g::float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(g::float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(g::float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie to even
  EXPECT_EQ(g::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_TRUE(std::isnan(g::half_to_float(g::float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(g::half_to_float(0xFFFF)));  // the device poison pattern
  // Every finite half value survives half -> float -> half.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(g::float_to_half(g::half_to_float(std::uint16_t(h))), h) << h;
  }
  // Rounding error within half an ulp for random values.
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const float x = float(gtb::uniform01(3, i) * 200.0 - 100.0);
    const float r = g::half_to_float(g::float_to_half(x));
    EXPECT_LE(std::fabs(r - x), std::fabs(x) * std::ldexp(1.0, -11) * 1.0001 + 1e-7) << x;
  }
}

TEST(GemmMath, Bf16RoundTrip) {
  EXPECT_EQ(g::float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(g::float_to_bf16(-1.0f), 0xBF80);
  EXPECT_EQ(g::bf16_to_float(0x4049), 3.140625f);
  EXPECT_EQ(g::float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie to even
  EXPECT_EQ(g::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie to even (up)
  EXPECT_TRUE(std::isnan(g::bf16_to_float(g::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(g::bf16_to_float(0xFFFF)));
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const float x = float(gtb::uniform01(5, i) * 2e6 - 1e6);
    const float r = g::bf16_to_float(g::float_to_bf16(x));
    EXPECT_LE(std::fabs(r - x), std::fabs(x) * std::ldexp(1.0, -8) * 1.0001) << x;
  }
}

TEST(GemmTiles, EstimateCountsTilesAndWaves) {
  // 4096^2 with 128x256 tiles: 32 x 16 = 512 tiles; on 132 SMs 4 waves, the last 116/132 full.
  const auto e = g::estimate_tiles(4096, 4096, {128, 256}, 132);
  EXPECT_EQ(e.tiles_m, 32);
  EXPECT_EQ(e.tiles_n, 16);
  EXPECT_EQ(e.tiles, 512);
  EXPECT_EQ(e.waves, 4);
  EXPECT_NEAR(e.wave_efficiency, 512.0 / 528.0, 1e-12);
  EXPECT_DOUBLE_EQ(e.tile_efficiency, 1.0);
  // One more row needs a whole row of extra tiles (tile quantization).
  const auto f = g::estimate_tiles(4097, 4096, {128, 256}, 132);
  EXPECT_EQ(f.tiles_m, 33);
  EXPECT_EQ(f.tiles, 528);
  EXPECT_EQ(f.waves, 4);
  EXPECT_DOUBLE_EQ(f.wave_efficiency, 1.0);
  EXPECT_NEAR(f.tile_efficiency, 4097.0 / (33 * 128), 1e-12);
  // Exactly one full wave, then one tile over.
  EXPECT_EQ(g::estimate_tiles(128 * 132, 128, {128, 128}, 132).waves, 1);
  EXPECT_EQ(g::estimate_tiles(128 * 133, 128, {128, 128}, 132).waves, 2);
  EXPECT_EQ(g::estimate_tiles(128 * 133, 128, {128, 128}, 132, 2).waves, 1);
  EXPECT_EQ(g::estimate_tiles(1, 1, {128, 256}, 132).tiles, 1);
  EXPECT_THROW(g::estimate_tiles(0, 1, {128, 128}, 132), std::invalid_argument);
  EXPECT_THROW(g::estimate_tiles(1, 1, {128, 128}, 0), std::invalid_argument);
  EXPECT_EQ(g::documented_tile(Precision::fp32).n, 128);
  EXPECT_EQ(g::documented_tile(Precision::bf16_fp32acc).n, 256);
}

TEST(GemmPeaks, DatasheetTableMatchesDeviceNames) {
  auto gpu = [](const char* name) {
    const auto p = g::find_peak(name);
    return p ? std::string(p->gpu) : std::string("-");
  };
  EXPECT_EQ(gpu("NVIDIA H200"), "H200");
  EXPECT_EQ(gpu("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(gpu("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(gpu("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(gpu("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(gpu("NVIDIA A100-SXM4-80GB"), "A100");
  EXPECT_EQ(gpu("NVIDIA A100 80GB PCIe"), "A100");
  EXPECT_EQ(gpu("NVIDIA L4"), "L4");
  EXPECT_EQ(gpu("NVIDIA L40S"), "-");
  EXPECT_EQ(gpu("NVIDIA GeForce RTX 4090"), "-");
  const auto h200 = g::find_peak("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_DOUBLE_EQ(g::peak_tflops(*h200, Precision::fp32), 67);
  EXPECT_DOUBLE_EQ(g::peak_tflops(*h200, Precision::bf16_fp32acc), 989.5);
  for (const auto& p : g::datasheet_peaks()) {
    EXPECT_LT(p.fp32, p.tf32) << p.gpu;
    EXPECT_LT(p.tf32, p.fp16) << p.gpu;
  }
}

TEST(GemmShapes, SuitesAndClasses) {
  for (bool full : {false, true})
    for (bool cpu : {false, true}) {
      const auto v = g::shapes(full, cpu);
      ASSERT_FALSE(v.empty());
      for (const auto& s : v) {
        EXPECT_GT(s.m, 0);
        EXPECT_FALSE(s.shape_class.empty());
        // Every CPU shape is also a GPU shape, so CPU and GPU records pair up.
        EXPECT_TRUE(g::contains(g::shapes(full, false), s.m, s.n, s.k)) << s.m << "x" << s.n << "x" << s.k;
      }
    }
  EXPECT_EQ(g::shape_class(4096, 4096, 4096), "square");
  EXPECT_EQ(g::shape_class(4095, 4095, 4095), "alignment");
  EXPECT_EQ(g::shape_class(1, 4096, 4096), "skinny");
  EXPECT_EQ(g::shape_class(2048, 4096, 1024), "training");
  EXPECT_EQ(g::shape_class(3, 5, 7), "");
  for (const auto& s : g::shapes(true, true)) EXPECT_LE(g::flops(s.m, s.n, s.k), g::kCpuFullMaxFlops);
  // Quick CPU shapes stay small enough for the quick suite's time budget.
  for (const auto& s : g::shapes(false, true)) EXPECT_LE(g::flops(s.m, s.n, s.k), 2.0 * 2052 * 2052 * 2052);
}

namespace {
struct Operands {
  int m, n, k;
  std::vector<float> a, b;
  Operands(int m_, int n_, int k_) : m(m_), n(n_), k(k_), a(std::size_t(m_) * k_), b(std::size_t(k_) * n_) {
    gtb::fill_normal(a.data(), a.size(), 11);
    gtb::fill_normal(b.data(), b.size(), 12);
  }
};
}  // namespace

TEST(GemmCpu, SgemmMatchesNaiveFloat64) {
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, std::tuple{7, 5, 3}, std::tuple{33, 65, 17}, std::tuple{128, 96, 200}}) {
    Operands o(m, n, k);
    std::vector<float> c(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
    gtb::cpu::gemm_sgemm(o.a.data(), o.b.data(), c.data(), m, n, k);
    std::vector<double> ref(std::size_t(m) * n);
    gtb::cpu::gemm_naive_f64(o.a.data(), o.b.data(), ref.data(), m, n, k);
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(c[i], ref[i], 1e-5 * std::sqrt(double(k)) * 4 + 1e-6) << m << "x" << n << "x" << k << " @" << i;
    std::vector<int> rows;
    for (int i = 0; i < m; ++i) rows.push_back(i);
    const auto chk = gtb::cpu::check_gemm(c.data(), m, n, rows, ref, g::tolerance(Precision::fp32, k));
    EXPECT_TRUE(chk.ok) << chk.detail;
    EXPECT_LT(chk.rel_fro_err, 1e-6);
  }
}

TEST(GemmCpu, ReferenceRowsMatchNaive) {
  Operands o(50, 40, 30);
  std::vector<double> full(50 * 40);
  gtb::cpu::gemm_naive_f64(o.a.data(), o.b.data(), full.data(), 50, 40, 30);
  const std::vector<int> rows = {0, 3, 17, 49};
  const auto ref = gtb::cpu::gemm_reference_rows(o.a.data(), o.b.data(), 40, 30, rows);
  ASSERT_EQ(ref.size(), rows.size() * 40);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int j = 0; j < 40; ++j) EXPECT_NEAR(ref[i * 40 + j], full[std::size_t(rows[i]) * 40 + j], 1e-12);
}

TEST(GemmCpu, CheckRowsSampleDistinctRowsWithEdges) {
  const auto all = gtb::cpu::gemm_check_rows(10, 64, 1);
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front(), 0);
  EXPECT_EQ(all.back(), 9);
  const auto some = gtb::cpu::gemm_check_rows(10000, 64, 1);
  ASSERT_EQ(some.size(), 64u);
  EXPECT_EQ(some.front(), 0);
  EXPECT_EQ(some.back(), 9999);
  EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  EXPECT_EQ(std::adjacent_find(some.begin(), some.end()), some.end());
  EXPECT_EQ(some, gtb::cpu::gemm_check_rows(10000, 64, 1));  // deterministic
  EXPECT_THROW(gtb::cpu::gemm_check_rows(0, 64, 1), std::invalid_argument);
}

class GemmCheckPlanted : public ::testing::Test {
 protected:
  void SetUp() override {
    o = std::make_unique<Operands>(m, n, k);
    c.resize(std::size_t(m) * n);
    gtb::cpu::gemm_sgemm(o->a.data(), o->b.data(), c.data(), m, n, k);
    rows = gtb::cpu::gemm_check_rows(m, 16, 5);
    ref = gtb::cpu::gemm_reference_rows(o->a.data(), o->b.data(), n, k, rows);
  }
  gtb::cpu::GemmCheck check(Precision p = Precision::fp32) {
    return gtb::cpu::check_gemm(c.data(), m, n, rows, ref, g::tolerance(p, k));
  }
  int m = 96, n = 80, k = 64;
  std::unique_ptr<Operands> o;
  std::vector<float> c;
  std::vector<int> rows;
  std::vector<double> ref;
};

TEST_F(GemmCheckPlanted, CorrectResultPasses) {
  const auto chk = check();
  EXPECT_TRUE(chk.ok) << chk.detail;
  EXPECT_EQ(chk.rows_checked, 16u);
  EXPECT_EQ(chk.nonfinite, 0u);
}

TEST_F(GemmCheckPlanted, WrongElementInCheckedRowFails) {
  c[std::size_t(rows[3]) * n + 7] += 50.0f;
  const auto chk = check(Precision::bf16_fp32acc);  // even the loosest fixed tolerance catches it
  EXPECT_FALSE(chk.ok) << chk.detail;
  EXPECT_GT(chk.rel_fro_err, chk.tolerance);
}

TEST_F(GemmCheckPlanted, TransposedResultFails) {
  std::vector<float> t(c.size());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) t[std::size_t(i) * n + j] = c[std::size_t((i * n + j) % m) * n + (i + j) % n];
  c = t;
  EXPECT_FALSE(check(Precision::fp16_fp16acc).ok);
}

TEST_F(GemmCheckPlanted, PoisonOutsideCheckedRowsFails) {
  // A row the sample does not compare but that was never written (NaN poison) still fails.
  int unchecked = 0;
  while (std::find(rows.begin(), rows.end(), unchecked) != rows.end()) ++unchecked;
  c[std::size_t(unchecked) * n] = std::numeric_limits<float>::quiet_NaN();
  const auto chk = check();
  EXPECT_FALSE(chk.ok);
  EXPECT_EQ(chk.nonfinite, 1u);
}

TEST_F(GemmCheckPlanted, Bf16LevelErrorFailsFp32ButPassesBf16) {
  // Round C to bf16-like precision: fine for bf16's tolerance, far outside fp32's.
  for (float& x : c) x = g::bf16_to_float(g::float_to_bf16(x));
  EXPECT_FALSE(check(Precision::fp32).ok);
  EXPECT_TRUE(check(Precision::bf16_fp32acc).ok);
}

TEST_F(GemmCheckPlanted, PlantedWrongResultMakesTheRecordInvalid) {
  auto run_case = [&](bool plant) {
    gtb::Record r;
    gtb::State st(r, gtb::Suite::quick, gtb::suite_rule(gtb::Suite::quick));
    std::vector<float> got = c;
    if (plant) got[std::size_t(rows.back()) * n + 1] = -got[std::size_t(rows.back()) * n + 1] + 3.0f;
    const bool ok = gtb::gemm::record_gemm_check(st, got.data(), m, n, rows, ref, g::tolerance(Precision::fp32, k));
    EXPECT_EQ(ok, st.check_passed());
    return r;
  };
  const gtb::Record good = run_case(false);
  EXPECT_EQ(good.status, gtb::Status::ok);
  EXPECT_TRUE(good.check["passed"].get<bool>());
  EXPECT_LT(good.counters.at("rel_fro_err").value, 1e-6);
  const gtb::Record bad = run_case(true);
  EXPECT_EQ(bad.status, gtb::Status::invalid);
  EXPECT_FALSE(bad.check["passed"].get<bool>());
  EXPECT_NE(bad.status_detail.find("rel_fro_err"), std::string::npos) << bad.status_detail;
  EXPECT_GT(bad.counters.at("rel_fro_err").value, bad.counters.at("tolerance").value);
}

TEST_F(GemmCheckPlanted, ReferenceSizeMismatchThrows) {
  ref.pop_back();
  EXPECT_THROW(check(), std::invalid_argument);
}

TEST(GemmCpu, EveryGemmLibraryMatchesFloat64InEveryTransposeCase) {
  const int m = 37, n = 29, k = 45;
  Operands o(std::max(m, k), std::max(n, k), std::max(m, k));  // room for every transposed layout
  for (auto lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn, gtb::cpu::GemmLib::mkl}) {
    if (!gtb::cpu::gemm_lib_available(lib)) continue;
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int lda = ta ? m : k, ldb = tb ? k : n;
        std::vector<float> c(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
        gtb::cpu::sgemm(lib, ta, tb, m, n, k, 1.0f, o.a.data(), lda, o.b.data(), ldb, 0.0f, c.data(), n);
        double worst = 0;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double r = 0;
            for (int p = 0; p < k; ++p)
              r += double(ta ? o.a[std::size_t(p) * lda + i] : o.a[std::size_t(i) * lda + p]) *
                   double(tb ? o.b[std::size_t(j) * ldb + p] : o.b[std::size_t(p) * ldb + j]);
            worst = std::max(worst, std::fabs(r - c[std::size_t(i) * n + j]));
          }
        EXPECT_LT(worst, 1e-4) << gtb::cpu::to_string(lib) << " ta=" << ta << " tb=" << tb;
      }
  }
  // Without oneDNN the OpenBLAS path is the only one and a oneDNN call is refused loudly.
  if (!gtb::cpu::gemm_lib_available(gtb::cpu::GemmLib::onednn)) {
    float x = 1, y = 1, z = 0;
    EXPECT_THROW(gtb::cpu::sgemm(gtb::cpu::GemmLib::onednn, false, false, 1, 1, 1, 1.0f, &x, 1, &y, 1, 0.0f, &z, 1),
                 std::logic_error);
  }
}

namespace {
// One low-precision oneDNN matmul against float64. A CPU (or a build) without that path refuses
// with gtb::Skip, whose reason must say why; the test then reports Skipped with it, never passes.
void low_precision_matmul_is_accurate(gtb::cpu::DnnlMatmul::Type type, Precision prec) {
  const int m = 48, n = 40, k = 64;
  Operands o(m, n, k);
  std::vector<double> ref(std::size_t(m) * n);
  gtb::cpu::gemm_naive_f64(o.a.data(), o.b.data(), ref.data(), m, n, k);
  std::vector<int> rows;
  for (int i = 0; i < m; ++i) rows.push_back(i);
  if (gtb::cpu::dnnl_built()) {
    EXPECT_FALSE(gtb::cpu::dnnl_version().empty());
  }
  try {
    gtb::cpu::DnnlMatmul mm(type, m, n, k, o.a.data(), o.b.data());
    std::vector<float> c(std::size_t(m) * n, std::numeric_limits<float>::quiet_NaN());
    mm.run();
    mm.result(c.data());
    const auto chk = gtb::cpu::check_gemm(c.data(), m, n, rows, ref, g::tolerance(prec, k));
    EXPECT_TRUE(chk.ok) << g::to_string(prec) << ": " << chk.detail;
    // Low precision really is low: the error is well above FP32's.
    EXPECT_GT(chk.rel_fro_err, 1e-5) << g::to_string(prec);
    EXPECT_FALSE(mm.impl().empty());
  } catch (const gtb::Skip& s) {
    ASSERT_NE(std::string(s.what()).find(gtb::cpu::dnnl_built() ? "oneDNN" : "built without"), std::string::npos)
        << s.what();
    GTEST_SKIP() << g::to_string(prec) << " matmul not run: " << s.what();
  }
}
}  // namespace

TEST(GemmCpu, Bf16MatmulIsAccurateOrSkipsWithReason) {
  low_precision_matmul_is_accurate(gtb::cpu::DnnlMatmul::Type::bf16, Precision::bf16_fp32acc);
}

TEST(GemmCpu, Fp16MatmulIsAccurateOrSkipsWithReason) {
  low_precision_matmul_is_accurate(gtb::cpu::DnnlMatmul::Type::f16, Precision::fp16_fp32acc);
}

namespace {
gtb::Record rec(gtb::Backend be, const std::string& variant, std::int64_t m, std::int64_t n, std::int64_t k,
                const std::string& prec, const std::string& l2, double tflops) {
  gtb::json options = {{"precision", prec}};
  if (!l2.empty()) options["l2"] = l2;
  return gtb::test::ok_record("gemm", "gemm", variant, be, {{"m", m}, {"n", n}, {"k", k}}, options, tflops);
}
}  // namespace

// The CPU's best BF16 rate is the fastest library's record at any shape, oneMKL's among them (the
// quick suite measures it at 2048^3 beside both oneDNNs), and the speed-up over FP32 takes it.
TEST(GemmFindings, BestCpuBf16RateTakesEveryLibrary) {
  using gtb::Backend;
  const std::vector<gtb::Record> rs = {
      rec(Backend::cpu, "openblas", 2048, 2048, 2048, "fp32", "", 0.2),
      rec(Backend::cpu, "onednn", 2048, 2048, 2048, "bf16_fp32acc", "", 0.05),
      rec(Backend::cpu, "onednn3", 2048, 2048, 2048, "bf16_fp32acc", "", 0.06),
      rec(Backend::cpu, "mkl", 2048, 2048, 2048, "bf16_fp32acc", "", 0.2),
      rec(Backend::cpu, "mkl", 1024, 1024, 1024, "bf16_fp32acc", "", 0.1),
  };
  gtb::json f;
  g::to_json(g::compute_findings(rs), f);
  const auto& best = f["best_rate"]["cpu"]["bf16_fp32acc"];
  EXPECT_EQ(best["variant"], "mkl");
  EXPECT_DOUBLE_EQ(best["tflops"].get<double>(), 0.2);
  EXPECT_EQ(best["m"], 2048);
  EXPECT_DOUBLE_EQ(f["pct_of_best"][rs[1].id].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(f["speedup_over_fp32"]["cpu"]["square"]["bf16_fp32acc"]["geomean"].get<double>(), 1.0);
}

TEST(GemmFindings, SpeedupsBestRateLibraryAndAlignment) {
  using gtb::Backend;
  std::vector<gtb::Record> rs = {
      rec(Backend::cuda, "cublas", 4096, 4096, 4096, "fp32", "warm", 50),
      rec(Backend::cuda, "cublaslt", 4096, 4096, 4096, "fp32", "warm", 55),
      rec(Backend::cuda, "cublas", 4096, 4096, 4096, "bf16_fp32acc", "warm", 600),
      rec(Backend::cuda, "cublaslt", 4096, 4096, 4096, "bf16_fp32acc", "warm", 550),
      rec(Backend::cuda, "cublas", 4095, 4095, 4095, "bf16_fp32acc", "warm", 300),
      rec(Backend::cuda, "cublas", 4095, 4095, 4095, "fp32", "warm", 50),
      rec(Backend::cpu, "openblas", 4096, 4096, 4096, "fp32", "", 2),
      rec(Backend::cpu, "onednn", 4096, 4096, 4096, "bf16_fp32acc", "", 4),
  };
  gtb::Record bad = rec(Backend::cuda, "cublas", 8192, 8192, 8192, "bf16_fp32acc", "warm", 5000);
  bad.status = gtb::Status::invalid;  // an invalid record never counts, however fast
  rs.push_back(bad);
  gtb::json f;
  const g::Findings found = g::compute_findings(rs);
  g::to_json(found, f);
  EXPECT_DOUBLE_EQ(f["best_rate"]["cuda"]["bf16_fp32acc"]["tflops"].get<double>(), 600);
  EXPECT_EQ(f["best_rate"]["cuda"]["bf16_fp32acc"]["variant"], "cublas");
  EXPECT_DOUBLE_EQ(f["pct_of_best"][rs[3].id].get<double>(), 100.0 * 550 / 600);
  EXPECT_DOUBLE_EQ(f["pct_of_best"][rs[4].id].get<double>(), 50.0);
  const auto& sq = f["speedup_over_fp32"]["cuda"]["square"]["bf16_fp32acc"];
  EXPECT_DOUBLE_EQ(sq["geomean"].get<double>(), 600.0 / 55.0);  // best library on each side
  EXPECT_DOUBLE_EQ(sq["memory_saved_pct"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(f["speedup_over_fp32"]["cuda"]["alignment"]["bf16_fp32acc"]["geomean"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(f["speedup_over_fp32"]["cpu"]["square"]["bf16_fp32acc"]["geomean"].get<double>(), 2.0);
  bool saw_fp32_choice = false;
  for (const auto& e : f["library_choice"])
    if (e["precision"] == "fp32") {
      EXPECT_EQ(e["faster"], "cublaslt");
      saw_fp32_choice = true;
    }
  EXPECT_TRUE(saw_fp32_choice);
  ASSERT_TRUE(f.contains("gpu_vs_cpu_same_precision"));
  // The records hold one CPU/GPU pair at bf16 (onednn 4 vs cublas 600): its entry must be there.
  std::vector<gtb::json> bf16_pairs;
  for (const auto& e : f["gpu_vs_cpu_same_precision"])
    if (e["precision"] == "bf16_fp32acc") bf16_pairs.push_back(e);
  ASSERT_TRUE(gtb_test::non_empty(bf16_pairs, "the bf16 entries of gpu_vs_cpu_same_precision"));
  for (const auto& e : bf16_pairs) EXPECT_DOUBLE_EQ(e["gpu_over_cpu"].get<double>(), 150.0);
  bool saw_alignment = false;
  for (const auto& e : f["alignment"])
    if (e["precision"] == "bf16_fp32acc" && e["backend"] == "cuda") {
      EXPECT_DOUBLE_EQ(e["ratio"].get<double>(), 0.5);
      EXPECT_EQ(e["aligned"]["m"], 4096);
      saw_alignment = true;
    }
  EXPECT_TRUE(saw_alignment);
  // The sections read the typed result: it holds what its JSON says.
  ASSERT_EQ(found.alignment.size(), f["alignment"].size());
  for (std::size_t i = 0; i < found.alignment.size(); ++i)
    EXPECT_DOUBLE_EQ(found.alignment[i].ratio, f["alignment"][i]["ratio"].get<double>());
  ASSERT_EQ(found.gpu_vs_cpu_same_precision.size(), f["gpu_vs_cpu_same_precision"].size());
}

namespace {
// A step-shape or batched record that took `seconds` per repetition.
gtb::Record timed(const std::string& workload, std::int64_t m, std::int64_t n, std::int64_t k, const std::string& orient,
                  double seconds, std::int64_t count = 0) {
  gtb::Record r;
  r.family = "gemm";
  r.workload = workload;
  r.variant = "openblas";
  r.backend = gtb::Backend::cpu;
  r.params = {{"m", m}, {"n", n}, {"k", k}};
  if (count) r.params["count"] = count;
  r.options = {{"orientation", orient}};
  r.id = gtb::make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  r.status = gtb::Status::ok;
  gtb::Stats st;
  st.median = seconds;
  r.stats = st;
  r.value = 1;
  return r;
}
const gtb::cost::Term* term(const g::Findings& f, const std::string& name, const std::string& orient) {
  for (const auto& t : f.terms)
    if (t.name == name && t.backend == gtb::Backend::cpu && t.where.value("precision", "") == "fp32" &&
        t.where.value("orientation", "") == orient)
      return &t;
  return nullptr;
}
}  // namespace

// The step shapes give one matmul table per orientation (the library shapes join nn), the batched
// records matmul_batched with the batch's FLOP/s; a backend without transposed records has no such table.
TEST(GemmFindings, MatmulTermsPerOrientationAndBatched) {
  gtb::Record lib = rec(gtb::Backend::cpu, "openblas", 1024, 1024, 1024, "fp32", "", 0.1);
  gtb::Stats st;
  st.median = 2.0 * 1024 * 1024 * 1024 / 1e11;
  lib.stats = st;
  const std::vector<gtb::Record> rs = {lib, timed("step_shapes", 256, 256, 64, "nn", 2.0 * 256 * 256 * 64 / 5e10),
                                       timed("step_shapes", 64, 256, 256, "tn", 2.0 * 64 * 256 * 256 / 2.5e10),
                                       timed("batched", 128, 128, 32, "nt", 16 * 2.0 * 128 * 128 * 32 / 4e10, 16)};
  const g::Findings f = g::compute_findings(rs);
  const auto* nn = term(f, "matmul", "nn");
  const auto* tn = term(f, "matmul", "tn");
  const auto* batched = term(f, "matmul_batched", "nt");
  ASSERT_TRUE(nn && tn && batched);
  EXPECT_EQ(term(f, "matmul", "nt"), nullptr);  // no nt records: no nt table
  ASSERT_EQ(nn->points.size(), 2u);
  ASSERT_EQ(tn->points.size(), 1u);
  EXPECT_NEAR(tn->points[0].y, 2.5e10, 1);
  EXPECT_EQ(tn->points[0].record, rs[2].id);
  ASSERT_EQ(batched->points.size(), 1u);
  EXPECT_NEAR(batched->points[0].y, 4e10, 1);  // the count is in the FLOPs
  for (const auto& t : f.terms) {
    if (t.backend == gtb::Backend::cuda) {
      EXPECT_EQ(t.where.value("orientation", "nn"), "nn") << t.name;
    }
  }
}

// The BF16 step sites measured through the per-shape plan (their FP32 operands rounded inside the
// timed product) form their own term, matmul_autocast, and stay out of the BF16 matmul table (whose
// operands were BF16 already): a planted plan record moves only matmul_autocast.
TEST(GemmFindings, PlanRecordsAreTheAutocastTermNotTheMatmulTable) {
  gtb::Record lib = rec(gtb::Backend::cpu, "onednn", 1024, 1024, 1024, "bf16_fp32acc", "", 0.1);
  gtb::Stats st;
  st.median = 2.0 * 1024 * 1024 * 1024 / 2e11;
  lib.stats = st;
  gtb::Record plan = timed("step_shapes", 512, 128, 128, "nn", 2.0 * 512 * 128 * 128 / 5e10);
  plan.variant = "plan";
  plan.options["precision"] = "bf16_fp32acc";
  plan.id = gtb::make_record_id(plan.family, plan.workload, plan.variant, plan.backend, plan.params, plan.options);
  const g::Findings f = g::compute_findings({lib, plan});
  auto bf16 = [&](const std::string& name) -> const gtb::cost::Term* {
    for (const auto& t : f.terms)
      if (t.name == name && t.backend == gtb::Backend::cpu && t.where.value("precision", "") == "bf16" &&
          t.where.value("orientation", "") == "nn")
        return &t;
    return nullptr;
  };
  const auto* table = bf16("matmul");
  const auto* autocast = bf16("matmul_autocast");
  ASSERT_TRUE(table && autocast);
  ASSERT_EQ(table->points.size(), 1u);
  EXPECT_EQ(table->points[0].record, lib.id);
  ASSERT_EQ(autocast->points.size(), 1u);
  EXPECT_EQ(autocast->points[0].record, plan.id);
  EXPECT_NEAR(autocast->points[0].y, 5e10, 1);
  EXPECT_NE(autocast->note.find("rounding included"), std::string::npos) << autocast->note;
  // Without plan records there is no autocast term (the model then adds the casts).
  for (const auto& t : g::compute_findings({lib}).terms) EXPECT_NE(t.name, "matmul_autocast");
}

namespace {
// A sequence record (rows x width, 4 layers) of one mode that took `seconds` per repetition.
gtb::Record sequence_rec(const std::string& precision, const std::string& mode, std::int64_t width, double seconds) {
  gtb::Record r = timed("sequence", 1, 1, 1, "nn", seconds);
  r.variant = "plan";
  r.params = {{"rows", 512}, {"width", width}, {"layers", 4}};
  r.options = {{"precision", precision}, {"mode", mode}};
  r.id = gtb::make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  r.counters["working_set_bytes"] = {4.0 * double(4 * width * width + 9 * 512 * width), "bytes"};
  return r;
}
// The findings' term of that name at that precision, or none.
const gtb::cost::Term* term_at(const g::Findings& f, const std::string& name, const std::string& precision) {
  for (const auto& t : f.terms)
    if (t.name == name && t.where.value("precision", "") == precision) return &t;
  return nullptr;
}
const gtb::cost::Term* in_step(const g::Findings& f, const std::string& precision) {
  return term_at(f, "matmul_in_step", precision);
}
// A usable share term of one point, `share`, at the FLOPs of one GEMM of a 128-wide sequence record.
void expect_one_share_at_one_gemm(const gtb::cost::Term* t, double share) {
  ASSERT_TRUE(t && t->usable());
  ASSERT_EQ(t->points.size(), 1u);
  EXPECT_NEAR(t->points[0].y, share, 1e-12);
  EXPECT_DOUBLE_EQ(t->points[0].at["flop"].get<double>(), 2.0 * 512 * 128 * 128);
}
}  // namespace

// matmul_in_step: hot / (chain - passes) per size for a chain record without its GEMMs timed inside
// (older files), at one GEMM's FLOPs, naming all three records; a planted slower chain lowers the
// share; a precision without sequence records cannot say.
TEST(GemmFindings, InStepShareFromTheSequenceRecords) {
  std::vector<gtb::Record> rs = {sequence_rec("fp32", "chain", 128, 1.2e-3), sequence_rec("fp32", "passes", 128, 0.2e-3),
                                 sequence_rec("fp32", "hot", 128, 0.8e-3)};
  g::Findings f = g::compute_findings(rs);
  const auto* t = in_step(f, "fp32");
  ASSERT_NO_FATAL_FAILURE(expect_one_share_at_one_gemm(t, 0.8));
  EXPECT_EQ(t->records.size(), 3u);
  const auto* b = in_step(f, "bf16");
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->usable());
  rs[0] = sequence_rec("fp32", "chain", 128, 1.7e-3);  // planted: the chain 0.5 ms slower
  f = g::compute_findings(rs);
  EXPECT_NEAR(in_step(f, "fp32")->points[0].y, 0.8 / 1.5, 1e-12);
  rs.pop_back();  // no hot record: no point, and the term says why
  f = g::compute_findings(rs);
  EXPECT_FALSE(in_step(f, "fp32")->usable());
}

// A chain record with its GEMMs timed inside the step (gemm_s_in_step) gives hot / those seconds, and
// needs no passes record; a planted slower in-step time lowers the share by exactly that; sizes
// are separate points by their GEMMs' FLOPs.
TEST(GemmFindings, InStepShareFromTheGemmsTimedInsideTheChain) {
  gtb::Record chain = sequence_rec("fp32", "chain", 128, 1.2e-3);
  chain.counters["gemm_s_in_step"] = {1.0e-3, "s"};
  std::vector<gtb::Record> rs = {chain, sequence_rec("fp32", "hot", 128, 0.8e-3)};
  g::Findings f = g::compute_findings(rs);
  const auto* t = in_step(f, "fp32");
  ASSERT_TRUE(t && t->usable());
  ASSERT_EQ(t->points.size(), 1u);
  EXPECT_NEAR(t->points[0].y, 0.8, 1e-12);
  EXPECT_EQ(t->records.size(), 2u);
  rs[0].counters["gemm_s_in_step"] = {1.6e-3, "s"};  // planted: the GEMMs 0.6 ms slower inside the step
  f = g::compute_findings(rs);
  EXPECT_NEAR(in_step(f, "fp32")->points[0].y, 0.5, 1e-12);
  gtb::Record wide = sequence_rec("fp32", "chain", 512, 9e-3);
  wide.counters["gemm_s_in_step"] = {8e-3, "s"};
  rs.push_back(wide);
  rs.push_back(sequence_rec("fp32", "hot", 512, 7.2e-3));
  f = g::compute_findings(rs);
  t = in_step(f, "fp32");
  ASSERT_EQ(t->points.size(), 2u);
  for (const auto& p : t->points) {
    const double flop = p.at["flop"].get<double>();
    EXPECT_TRUE(flop == 2.0 * 512 * 128 * 128 || flop == 2.0 * 512 * 512 * 512) << flop;
    EXPECT_NEAR(p.y, flop > 1e8 ? 0.9 : 0.5, 1e-12);
  }
}

// matmul_from_memory: each cold record's own hot / cold share (hot_over_cold) at one GEMM's FLOPs,
// naming the cold record, applying above the last-level cache it emptied (x_min); a planted lower
// share moves the point by exactly that; a cold record that does not say which cache it emptied, or
// a file without cold records (older gtb), publishes no term; hot records alone play no part.
TEST(GemmFindings, FromMemoryShareFromTheColdRecords) {
  auto cold = [](std::int64_t width, double share, double llc) {
    gtb::Record r = sequence_rec("fp32", "cold", width, 2e-3);
    r.counters["hot_over_cold"] = {share, "fraction"};
    if (llc > 0) r.counters["last_level_cache_bytes"] = {llc, "bytes"};
    return r;
  };
  auto term = [](const g::Findings& f, const std::string& precision) { return term_at(f, "matmul_from_memory", precision); };
  std::vector<gtb::Record> rs = {cold(128, 0.6, 32.0 * 1048576), sequence_rec("fp32", "hot", 128, 0.8e-3)};
  g::Findings f = g::compute_findings(rs);
  const auto* t = term(f, "fp32");
  ASSERT_NO_FATAL_FAILURE(expect_one_share_at_one_gemm(t, 0.6));
  EXPECT_EQ(t->records, std::vector<std::string>{rs[0].id});
  EXPECT_EQ(t->x, "working_set_bytes");
  EXPECT_DOUBLE_EQ(t->x_min, 32.0 * 1048576);
  EXPECT_FALSE(term(f, "bf16"));
  rs[0] = cold(128, 0.3, 32.0 * 1048576);  // planted: the cold calls twice as slow against their hot twins
  EXPECT_NEAR(term(g::compute_findings(rs), "fp32")->points[0].y, 0.3, 1e-12);
  rs.push_back(cold(512, 0.9, 32.0 * 1048576));
  f = g::compute_findings(rs);
  ASSERT_EQ(term(f, "fp32")->points.size(), 2u);
  EXPECT_FALSE(term(g::compute_findings({cold(128, 0.6, 0)}), "fp32"));  // no cache size: applies nowhere
  EXPECT_FALSE(term(g::compute_findings({sequence_rec("fp32", "hot", 128, 0.8e-3)}), "fp32"));
}

// matmul_one_thread: a one-thread chain's GEMM seconds timed inside the step over its 3 x layers - 1
// calls, as a rate at one GEMM's FLOPs, naming the chain; a planted slower in-step time lowers the
// rate by exactly that; the all-thread chain, a BF16 chain and a chain without its in-step seconds
// publish none.
TEST(GemmFindings, OneThreadRateFromTheOneThreadChain) {
  auto chain = [](const std::string& precision, const std::string& threads, double inside) {
    gtb::Record r = sequence_rec(precision, "chain", 128, 1.2e-3);
    r.options["threads"] = threads;
    r.id = gtb::make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
    if (inside > 0) r.counters["gemm_s_in_step"] = {inside, "s"};
    return r;
  };
  auto term = [](const g::Findings& f) { return term_at(f, "matmul_one_thread", "fp32"); };
  const double flop = 2.0 * 512 * 128 * 128;
  std::vector<gtb::Record> rs = {chain("fp32", "one", 1e-3), chain("fp32", "all", 0.25e-3)};
  g::Findings f = g::compute_findings(rs);
  const auto* t = term(f);
  ASSERT_TRUE(t && t->usable());
  ASSERT_EQ(t->points.size(), 1u);
  EXPECT_DOUBLE_EQ(t->points[0].at["flop"].get<double>(), flop);
  EXPECT_NEAR(t->points[0].y, flop * 11 / 1e-3, 1);
  EXPECT_EQ(t->records, std::vector<std::string>{rs[0].id});
  EXPECT_EQ(t->y, "flop_per_s");
  rs[0] = chain("fp32", "one", 2e-3);  // planted: the GEMMs twice as slow inside the one-thread step
  f = g::compute_findings(rs);
  ASSERT_TRUE(term(f));
  EXPECT_NEAR(term(f)->points[0].y, flop * 11 / 2e-3, 1);
  EXPECT_FALSE(term(g::compute_findings({chain("fp32", "all", 1e-3)})));
  EXPECT_FALSE(term_at(g::compute_findings({chain("bf16_fp32acc", "one", 1e-3)}), "matmul_one_thread", "bf16"));
  EXPECT_FALSE(term(g::compute_findings({chain("fp32", "one", 0)})));
}

namespace {
const gtb::cost::Term* named(const g::Findings& f, const std::string& name, const std::string& precision) {
  for (const auto& t : f.terms)
    if (t.name == name && t.where.value("precision", "") == precision && t.where.value("threads", "") == "all") return &t;
  return nullptr;
}
// A chain and a passes record of one size whose passes and update took `pass_in`/`update_in` seconds
// inside the step and `pass_alone`/`update_alone` alone.
std::vector<gtb::Record> timed_passes(std::int64_t width, double pass_in, double pass_alone, double update_in,
                                      double update_alone) {
  gtb::Record chain = sequence_rec("fp32", "chain", width, 2e-3), passes = sequence_rec("fp32", "passes", width, 1e-3);
  chain.counters["pass_s_in_step"] = {pass_in, "s"};
  chain.counters["update_s_in_step"] = {update_in, "s"};
  chain.counters["pass_bytes"] = {4.0 * 512 * double(width) * 20, "bytes"};
  chain.counters["update_bytes"] = {4.0 * double(width * width) * 4 * 5, "bytes"};
  passes.counters["pass_s"] = {pass_alone, "s"};
  passes.counters["update_s"] = {update_alone, "s"};
  return {chain, passes};
}
}  // namespace

// passes_in_step and update_in_step: the passes record's seconds alone / the chain's inside the step,
// at the bytes they move, naming both records; a planted slower update inside the step lowers only its
// share; a file whose sequences timed only their GEMMs (no such counters) gives neither term.
TEST(GemmFindings, PassAndUpdateSharesFromTheSequenceRecords) {
  std::vector<gtb::Record> rs = timed_passes(128, 0.4e-3, 0.3e-3, 0.2e-3, 0.1e-3);
  g::Findings f = g::compute_findings(rs);
  const auto* p = named(f, "passes_in_step", "fp32");
  const auto* u = named(f, "update_in_step", "fp32");
  ASSERT_TRUE(p && u && p->usable() && u->usable());
  ASSERT_EQ(p->points.size(), 1u);
  EXPECT_NEAR(p->points[0].y, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(p->points[0].at["bytes"].get<double>(), 4.0 * 512 * 128 * 20);
  EXPECT_NEAR(u->points[0].y, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(u->points[0].at["bytes"].get<double>(), 4.0 * 128 * 128 * 4 * 5);
  EXPECT_EQ(u->records, (std::vector<std::string>{rs[0].id, rs[1].id}));
  EXPECT_EQ(u->where.value("threads", ""), "all");  // records without the option: an older file's, all threads
  EXPECT_FALSE(named(f, "passes_in_step", "bf16"));
  // The same size on one thread is a term of its own; the all-thread one keeps its share.
  std::vector<gtb::Record> one = timed_passes(128, 0.2e-3, 0.1e-3, 0.2e-3, 0.2e-3);
  for (auto& r : one) {
    r.options["threads"] = "one";
    r.id = gtb::make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  }
  std::vector<gtb::Record> both = rs;
  both.insert(both.end(), one.begin(), one.end());
  f = g::compute_findings(both);
  int on_one = 0;
  for (const auto& t : f.terms)
    if (t.name == "passes_in_step" && t.where.value("threads", "") == "one") {
      ++on_one;
      EXPECT_NEAR(t.points.at(0).y, 0.5, 1e-12);
    }
  EXPECT_EQ(on_one, 1);
  EXPECT_NEAR(named(f, "passes_in_step", "fp32")->points[0].y, 0.75, 1e-12);
  rs[0].counters["update_s_in_step"] = {0.4e-3, "s"};  // planted: the update twice as slow inside the step
  f = g::compute_findings(rs);
  EXPECT_NEAR(named(f, "update_in_step", "fp32")->points[0].y, 0.25, 1e-12);
  EXPECT_NEAR(named(f, "passes_in_step", "fp32")->points[0].y, 0.75, 1e-12);
  // Two sizes whose updates move the same bytes at different rows are two points of the update's
  // table over bytes and rows, each its own share (what streams through the caches between two
  // updates grows with the rows); the passes, whose bytes grow with the rows, stay over bytes.
  std::vector<gtb::Record> more = timed_passes(128, 0.4e-3, 0.3e-3, 0.1e-3, 0.1e-3);
  for (auto& r : more) {
    r.params["rows"] = 64;
    r.id = gtb::make_record_id(r.family, r.workload, r.variant, r.backend, r.params, r.options);
  }
  more[0].counters["pass_bytes"] = {4.0 * 64 * 128 * 20, "bytes"};
  rs.insert(rs.end(), more.begin(), more.end());
  f = g::compute_findings(rs);
  const auto* update = named(f, "update_in_step", "fp32");
  ASSERT_EQ(update->points.size(), 2u);
  EXPECT_EQ(update->axes, (std::vector<std::string>{"bytes", "rows"}));
  const double rows_first = rs[0].params.value("rows", 0.0);
  ASSERT_GT(rows_first, 0);
  ASSERT_NE(rows_first, 64);
  for (const auto& pt : update->points)
    EXPECT_NEAR(pt.y, pt.at["rows"].get<double>() == 64 ? 1.0 : 0.25, 1e-12) << pt.at.dump();
  EXPECT_EQ(update->records.size(), 4u);
  EXPECT_EQ(named(f, "passes_in_step", "fp32")->points.size(), 2u);
  EXPECT_EQ(named(f, "passes_in_step", "fp32")->axes, std::vector<std::string>{"bytes"});
  // Older files: sequences without the counters publish no pass or update share.
  f = g::compute_findings({sequence_rec("fp32", "chain", 128, 1.2e-3), sequence_rec("fp32", "passes", 128, 0.2e-3)});
  EXPECT_FALSE(named(f, "passes_in_step", "fp32"));
  EXPECT_FALSE(named(f, "update_in_step", "fp32"));
}

// A paired record's own shares (each call inside the step against the same call repeated at once)
// make the points of matmul_in_step, passes_in_step and update_in_step, naming only it, whatever the
// chain, hot and passes records of the same size say (taken at other moments); a planted lower share
// moves its point by exactly that; a size without a paired record keeps the older way.
TEST(GemmFindings, PairedRecordGivesTheInStepSharesOfOneMoment) {
  auto paired = [](std::int64_t width, double gemm, double pass, double update) {
    gtb::Record r = sequence_rec("fp32", "paired", width, 3e-3);
    r.counters["gemm_hot_over_in_step"] = {gemm, "fraction"};
    r.counters["pass_hot_over_in_step"] = {pass, "fraction"};
    r.counters["update_hot_over_in_step"] = {update, "fraction"};
    r.counters["pass_bytes"] = {4.0 * 512 * double(width) * 20, "bytes"};
    r.counters["update_bytes"] = {4.0 * double(width * width) * 4 * 5, "bytes"};
    return r;
  };
  // The older records of the same size say otherwise: 0.8 for the GEMMs, 0.75 and 0.5 for the passes
  // and the update.
  std::vector<gtb::Record> rs = timed_passes(128, 0.4e-3, 0.3e-3, 0.2e-3, 0.1e-3);
  rs[0].counters["gemm_s_in_step"] = {1.0e-3, "s"};
  rs.push_back(sequence_rec("fp32", "hot", 128, 0.8e-3));
  g::Findings f = g::compute_findings(rs);
  ASSERT_NEAR(in_step(f, "fp32")->points.at(0).y, 0.8, 1e-12);
  rs.push_back(paired(128, 0.9, 0.6, 0.3));
  f = g::compute_findings(rs);
  const auto* mm = in_step(f, "fp32");
  const auto* p = named(f, "passes_in_step", "fp32");
  const auto* u = named(f, "update_in_step", "fp32");
  ASSERT_TRUE(mm && p && u);
  ASSERT_EQ(mm->points.size(), 1u);
  EXPECT_NEAR(mm->points[0].y, 0.9, 1e-12);
  EXPECT_DOUBLE_EQ(mm->points[0].at["flop"].get<double>(), 2.0 * 512 * 128 * 128);
  EXPECT_EQ(mm->records, std::vector<std::string>{rs.back().id});
  ASSERT_EQ(p->points.size(), 1u);
  EXPECT_NEAR(p->points[0].y, 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(p->points[0].at["bytes"].get<double>(), 4.0 * 512 * 128 * 20);
  EXPECT_NEAR(u->points.at(0).y, 0.3, 1e-12);
  EXPECT_EQ(u->records, std::vector<std::string>{rs.back().id});
  rs.back() = paired(128, 0.45, 0.6, 0.3);  // planted: the GEMMs half as fast inside the step
  f = g::compute_findings(rs);
  EXPECT_NEAR(in_step(f, "fp32")->points.at(0).y, 0.45, 1e-12);
  EXPECT_NEAR(named(f, "passes_in_step", "fp32")->points.at(0).y, 0.6, 1e-12);
  // A second size with only the older records keeps their share.
  gtb::Record wide = sequence_rec("fp32", "chain", 512, 9e-3);
  wide.counters["gemm_s_in_step"] = {8e-3, "s"};
  rs.push_back(wide);
  rs.push_back(sequence_rec("fp32", "hot", 512, 7.2e-3));
  f = g::compute_findings(rs);
  ASSERT_EQ(in_step(f, "fp32")->points.size(), 2u);
  for (const auto& pt : in_step(f, "fp32")->points)
    EXPECT_NEAR(pt.y, pt.at["flop"].get<double>() > 1e8 ? 0.9 : 0.45, 1e-12);
}

// The sequence's update check against float64: a right update passes; a planted wrong weight, a
// wrong momentum, a NaN and an update applied twice are each caught at their parameter; sizes that
// differ are refused.
TEST(GemmSequenceCheck, UpdateCheckCatchesAPlantedWrongParameter) {
  const float lr = 1e-3f, mu = 0.9f;
  std::vector<float> w0(1000), v0(1000), g(1000);
  for (std::size_t i = 0; i < w0.size(); ++i) {
    w0[i] = std::sin(float(i)), v0[i] = std::cos(float(i)) * 0.1f, g[i] = float(i % 7) - 3.0f;
  }
  std::vector<float> w = w0, v = v0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    v[i] = mu * v[i] + g[i];
    w[i] -= lr * v[i];
  }
  EXPECT_EQ(g::first_wrong_sgd_update(w0, v0, g.data(), w, v, lr, mu), -1);
  auto planted = w;
  planted[417] += 1e-3f;
  EXPECT_EQ(g::first_wrong_sgd_update(w0, v0, g.data(), planted, v, lr, mu), 417);
  auto momentum = v;
  momentum[3] *= 1.01f;
  EXPECT_EQ(g::first_wrong_sgd_update(w0, v0, g.data(), w, momentum, lr, mu), 3);
  planted = w;
  planted[999] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(g::first_wrong_sgd_update(w0, v0, g.data(), planted, v, lr, mu), 999);
  auto twice_w = w, twice_v = v;  // the update applied twice: wrong from the first parameter with a gradient
  for (std::size_t i = 0; i < w.size(); ++i) {
    twice_v[i] = mu * twice_v[i] + g[i];
    twice_w[i] -= lr * twice_v[i];
  }
  EXPECT_EQ(g::first_wrong_sgd_update(w0, v0, g.data(), twice_w, twice_v, lr, mu), 0);
  EXPECT_THROW(g::first_wrong_sgd_update(w0, v0, g.data(), std::vector<float>(999), v, lr, mu), std::invalid_argument);
}

TEST(GemmFindings, EmptyInputGivesNoFindings) {
  gtb::json f = gtb::json::object();
  const g::Findings found = g::compute_findings({});
  EXPECT_TRUE(found.best_rate.empty() && found.pct_of_best.empty() && found.alignment.empty());
  g::to_json(found, f);
  EXPECT_TRUE(f.empty());
}

// cuBLASLt's heuristic with no algorithm for a problem (some odd 16-bit shapes) makes the record
// skipped with its answer; an error stays an error.
TEST(GemmLtHeuristic, NoAlgorithmSkipsWithTheAnswerAndErrorsFail) {
  namespace cu = gtb::cuda;
  using Kind = cu::LtChoice::Kind;
  const std::string problem = "fp16_fp32acc m=2047 n=2047 k=2047";
  cu::LtHeuristicAnswer ok{cu::kLtStatusSuccess, "CUBLAS_STATUS_SUCCESS", 3, cu::kLtStatusSuccess, "CUBLAS_STATUS_SUCCESS"};
  EXPECT_EQ(cu::choose_lt_algorithm(ok, problem).kind, Kind::use_first);

  cu::LtHeuristicAnswer none{cu::kLtStatusNotSupported, "CUBLAS_STATUS_NOT_SUPPORTED", 0, 0, ""};
  const cu::LtChoice c = cu::choose_lt_algorithm(none, problem);
  EXPECT_EQ(c.kind, Kind::skip);
  EXPECT_NE(c.detail.find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find(problem), std::string::npos) << c.detail;
  EXPECT_NE(c.detail.find("0 result"), std::string::npos) << c.detail;

  cu::LtHeuristicAnswer empty{cu::kLtStatusSuccess, "CUBLAS_STATUS_SUCCESS", 0, 0, ""};
  EXPECT_EQ(cu::choose_lt_algorithm(empty, problem).kind, Kind::skip);

  cu::LtHeuristicAnswer unusable{cu::kLtStatusSuccess, "CUBLAS_STATUS_SUCCESS", 1, cu::kLtStatusNotSupported,
                                 "CUBLAS_STATUS_NOT_SUPPORTED"};
  const cu::LtChoice u = cu::choose_lt_algorithm(unusable, problem);
  EXPECT_EQ(u.kind, Kind::skip);
  EXPECT_NE(u.detail.find("first in state CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << u.detail;

  cu::LtHeuristicAnswer error{7, "CUBLAS_STATUS_INVALID_VALUE", 0, 0, ""};  // a bad layout, say
  const cu::LtChoice e = cu::choose_lt_algorithm(error, problem);
  EXPECT_EQ(e.kind, Kind::fail);
  EXPECT_NE(e.detail.find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << e.detail;
}
