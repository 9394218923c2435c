// GPU tests of the GEMM family: every precision through cuBLAS and cuBLASLt against the float64
// CPU reference on small random shapes (odd sizes included), and poison detection.
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gtb/cuda_timing.h"
#include "kernels/common/cuda/blas.h"
#include "kernels/common/errors.h"
#include "kernels/common/random.h"
#include "kernels/gemm/cpu/gemm.h"
#include "kernels/gemm/cuda/gemm.h"
#include "kernels/gemm/cuda/gemm_lt.h"
#include "kernels/gemm/gemm.h"

namespace g = gtb::gemm;

namespace gtb::gemm {
// Readable parameter names in test output and CTest names.
void PrintTo(Precision p, std::ostream* os) { *os << to_string(p); }
}  // namespace gtb::gemm

namespace {
struct Case {
  int m, n, k;
};
// The last case is large enough that uploads from pageable memory go through several staging
// chunks (a GEMM started before the last chunk lands reads stale B rows); its check samples rows.
const Case kCases[] = {{64, 64, 64}, {1, 256, 128}, {127, 33, 65}, {256, 128, 512}, {1000, 2048, 2048}};
constexpr int kMaxCheckedRows = 256;  // every row of the small cases

// cuBLASLt may have no algorithm for a shape whose leading dimensions (n, k in the column-major
// view) are not a multiple of 8 elements; for one whose are, it must have one.
bool aligned(const Case& cs) { return cs.n % 8 == 0 && cs.k % 8 == 0; }

// C, or nothing when cuBLASLt has no algorithm (`skipped` says why).
std::optional<std::vector<float>> run(g::Precision p, const Case& cs, bool lt, const std::vector<float>& a,
                                      const std::vector<float>& b, std::string& skipped) {
  gtb::cuda::Stream stream;
  gtb::cuda::GemmOperands ops(p, cs.m, cs.n, cs.k, a.data(), b.data());
  ops.poison_c(stream.get());
  if (lt) {
    std::optional<gtb::cuda::LtGemm> plan;
    try {
      plan.emplace(ops);
    } catch (const gtb::Skip& e) {
      skipped = e.what();
      return std::nullopt;
    }
    EXPECT_GE(plan->algo().algo_id, 0);
    EXPECT_GT(plan->algo().candidates, 0);
    plan->run(ops, stream.get());
  } else {
    gtb::cuda::Blas blas(stream.get());
    gtb::cuda::gemm_cublas(blas, ops);
  }
  stream.sync();
  return ops.download_c();
}
}  // namespace

class GemmGpu : public ::testing::TestWithParam<std::tuple<g::Precision, bool>> {};

TEST_P(GemmGpu, MatchesFloat64Reference) {
  const auto [p, lt] = GetParam();
  for (const Case& cs : kCases) {
    std::vector<float> a(std::size_t(cs.m) * cs.k), b(std::size_t(cs.k) * cs.n);
    gtb::fill_normal(a.data(), a.size(), 21);
    gtb::fill_normal(b.data(), b.size(), 22);
    const std::vector<int> rows = gtb::cpu::gemm_check_rows(cs.m, kMaxCheckedRows, 23);
    const auto ref = gtb::cpu::gemm_reference_rows(a.data(), b.data(), cs.n, cs.k, rows);
    std::string skipped;
    const auto c = run(p, cs, lt, a, b, skipped);
    if (!c) {
      // The record of such a case is `skipped` with this text; an aligned shape must never get here.
      EXPECT_FALSE(aligned(cs)) << skipped;
      EXPECT_NE(skipped.find(g::to_string(p)), std::string::npos) << skipped;
      std::printf("note: %s\n", skipped.c_str());
      continue;
    }
    const auto chk = gtb::cpu::check_gemm(c->data(), cs.m, cs.n, rows, ref, g::tolerance(p, cs.k));
    EXPECT_TRUE(chk.ok) << g::to_string(p) << (lt ? " cublasLt " : " cublas ") << cs.m << "x" << cs.n << "x"
                        << cs.k << ": " << chk.detail;
    // 16-bit inputs are rounded on the host, so their error cannot be FP32-small whatever kernel
    // cuBLAS picks (TF32 may legitimately fall back to an FP32 kernel on small shapes).
    if (g::input_bytes(p) == 2) {
      EXPECT_GT(chk.rel_fro_err, 1e-5) << "16-bit inputs should show a 16-bit error";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, GemmGpu,
                         ::testing::Combine(::testing::ValuesIn(g::all_precisions()), ::testing::Bool()),
                         [](const auto& pinfo) {
                           return std::string(g::to_string(std::get<0>(pinfo.param))) +
                                  (std::get<1>(pinfo.param) ? "_lt" : "_cublas");
                         });

TEST(GemmGpuPoison, UnwrittenOutputIsNaN) {
  for (g::Precision p : g::all_precisions()) {
    const std::vector<float> a(64 * 64, 1.0f);
    gtb::cuda::Stream stream;
    gtb::cuda::GemmOperands ops(p, 64, 64, 64, a.data(), a.data());
    ops.poison_c(stream.get());
    stream.sync();
    const auto c = ops.download_c();
    for (float x : c) ASSERT_TRUE(std::isnan(x)) << g::to_string(p);
  }
}

TEST(GemmGpuDevice, ReportsSmCount) {
  const auto d = gtb::cuda::gemm_device();
  EXPECT_GT(d.sms, 0);
  EXPECT_FALSE(d.name.empty());
}
