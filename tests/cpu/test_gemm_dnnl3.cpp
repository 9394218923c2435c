// The current oneDNN (3.x) beside Debian's oneDNN 2.6 in one process: its SGEMM and matmul (FP32 and
// BF16 operands) against float64 in every transposition, 2.6 still answering the linked calls, the ISA
// it reports, and a clear skip where it is not there.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/dnnl3.h"
#include "kernels/common/cpu/gemm_plan.h"
#include "kernels/common/cpu/mkl.h"  // to_bf16
#include "kernels/common/errors.h"
#include "kernels/common/random.h"
#include "tests/common/gemm_f64.h"

namespace dnnl3 = gtb::cpu::dnnl3;
namespace plan = gtb::cpu::plan;
using gtb::test::gemm_operands;
using gtb::test::worst_relative;

TEST(GemmDnnl3, UnavailableIsASkipWithTheReason) {
  if (dnnl3::available()) {
    EXPECT_TRUE(dnnl3::built());
    EXPECT_EQ(dnnl3::unavailable_reason(), "");
    EXPECT_EQ(dnnl3::version().rfind("oneDNN 3.", 0), 0u) << dnnl3::version();
    EXPECT_NO_THROW(dnnl3::require());
    return;
  }
  const std::string why = dnnl3::unavailable_reason();
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(dnnl3::version(), "");
  EXPECT_EQ(dnnl3::isa(), "");
  EXPECT_EQ(dnnl3::native_bf16_unavailable(), why);
  float x = 1, y = 1, z = 0;
  try {
    dnnl3::sgemm(false, false, 1, 1, 1, 1.0f, &x, 1, &y, 1, 0.0f, &z, 1);
    ADD_FAILURE() << "a oneDNN 3 call without oneDNN 3 returned";
  } catch (const gtb::Skip& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(dnnl3::Matmul(true, false, false, 4, 4, 4, 4, 0.0f), gtb::Skip);
  GTEST_SKIP() << why;
}

TEST(GemmDnnl3, ReportsAnIsaItKnows) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  const std::vector<std::string> known = {"sse41",           "avx",              "avx2",
                                          "avx2_vnni",       "avx2_vnni_2",      "avx512_core",
                                          "avx512_core_vnni", "avx512_core_bf16", "avx512_core_fp16",
                                          "avx512_core_amx", "avx512_core_amx_fp16"};
  EXPECT_NE(std::find(known.begin(), known.end(), dnnl3::isa()), known.end()) << dnnl3::isa();
  EXPECT_EQ(dnnl3::threading(), "GNU OpenMP (the process's libgomp)");
}

// Both libraries export dnnl_version, dnnl_sgemm and the rest (and dnnl::impl's C++ names): the
// process's lookups must still find the linked 2.6, and 3's calls its own code.
TEST(GemmDnnl3, DebiansOneDnnStillAnswersTheLinkedCalls) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  if (!gtb::cpu::dnnl_built()) GTEST_SKIP() << "built without Debian's oneDNN: nothing shares its names";
  EXPECT_EQ(gtb::cpu::dnnl_version().rfind("2.", 0), 0u) << gtb::cpu::dnnl_version();
  void* sym = dlsym(RTLD_DEFAULT, "dnnl_version");
  ASSERT_NE(sym, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(sym, &info), 0);
  EXPECT_EQ(std::string(info.dli_fname).find("libdnnl.so.3"), std::string::npos) << info.dli_fname;
  // Both compute, one after the other, in one process.
  const float a[4] = {1, 2, 3, 4};
  float c2[4] = {}, c3[4] = {};
  gtb::cpu::sgemm(gtb::cpu::GemmLib::onednn, false, false, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c2, 2);
  dnnl3::sgemm(false, false, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c3, 2);
  const float want[4] = {7, 10, 15, 22};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c2[i], want[i]);
    EXPECT_EQ(c3[i], want[i]);
  }
}

TEST(GemmDnnl3, SgemmAndMatmulMatchFloat64InEveryTransposeCase) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  const int m = 37, n = 29, k = 300, ldc = 31;  // C inside wider rows: the plan's sites have them
  const auto [a, b, a16, b16, ad, bd, ar, br] = gemm_operands(std::size_t(m) * k, std::size_t(k) * n, 31, 32);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
      const int lda = ta ? m : k, ldb = tb ? k : n;
      std::vector<float> c(std::size_t(m) * ldc, nan);
      dnnl3::sgemm(ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
      EXPECT_LT(worst_relative(c, ldc, ad, bd, m, n, k, ta, tb), 1e-5);
      // FP32 matmul.
      std::fill(c.begin(), c.end(), nan);
      const dnnl3::Matmul f32(false, ta, tb, m, n, k, ldc, 0.0f);
      f32.run(a.data(), b.data(), c.data());
      EXPECT_LT(worst_relative(c, ldc, ad, bd, m, n, k, ta, tb), 1e-5) << f32.impl();
      EXPECT_TRUE(std::isnan(c[std::size_t(n)])) << "wrote past n in a row of ldc";
      // BF16 matmul: exact products of the rounded operands, accumulated in FP32.
      std::unique_ptr<dnnl3::Matmul> bf16;
      try {
        bf16 = std::make_unique<dnnl3::Matmul>(true, ta, tb, m, n, k, ldc, 0.0f);
      } catch (const gtb::Skip& e) {
        GTEST_SKIP() << e.what();
      }
      std::fill(c.begin(), c.end(), nan);
      bf16->run(a16.data(), b16.data(), c.data());
      EXPECT_LT(worst_relative(c, ldc, ar, br, m, n, k, ta, tb), 1e-5) << bf16->impl();
      const double vs_fp32 = worst_relative(c, ldc, ad, bd, m, n, k, ta, tb);
      EXPECT_GT(vs_fp32, 5e-5);  // the operands really were rounded
      EXPECT_LT(vs_fp32, 2.0 * std::ldexp(1.0, -8));
      // beta = 1 through the sum post-op accumulates into C.
      std::vector<float> twice = c;
      const dnnl3::Matmul acc(true, ta, tb, m, n, k, ldc, 1.0f);
      acc.run(a16.data(), b16.data(), twice.data());
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          const std::size_t x = std::size_t(i) * ldc + j;
          ASSERT_NEAR(twice[x], 2 * c[x], 1e-4 * (1 + std::fabs(c[x])));
        }
    }
}

TEST(GemmDnnl3, NativeBf16SaysWhyNotOrNamesAKernel) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  const std::string why = dnnl3::native_bf16_unavailable();
  try {
    const dnnl3::Matmul probe(true, false, false, 64, 64, 64, 64, 0.0f);
    EXPECT_EQ(why.empty(), !probe.reference()) << probe.impl() << " / " << why;
    if (!why.empty()) {
      EXPECT_NE(why.find(dnnl3::isa()), std::string::npos) << why;
    }
  } catch (const gtb::Skip& e) {
    EXPECT_EQ(why, e.what());
  }
}

TEST(GemmDnnl3, BadShapeIsRejected) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  EXPECT_THROW(dnnl3::Matmul(true, false, false, 0, 4, 4, 4, 0.0f), std::invalid_argument);
  EXPECT_THROW(dnnl3::Matmul(true, false, false, 4, 8, 4, 4, 0.0f), std::invalid_argument);  // ldc < n
}

// An AVX2-only CPU for real: oneDNN 3 capped to AVX2 (ONEDNN_MAX_CPU_ISA, read when it first
// dispatches) has no BF16 matmul, says so, and the plan chooses another verified library. Needs a
// process where oneDNN 3 has not dispatched yet (ctest runs each test alone).
TEST(GemmDnnl3, OnAnAvx2CpuThePlanRunsAnotherLibrary) {
  setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  if (dnnl3::isa() != "avx2")
    GTEST_SKIP() << "oneDNN 3 dispatches to " << dnnl3::isa()
                 << " (a CPU without AVX2, or it dispatched before this test in the process: run it alone)";
  const std::string why = dnnl3::native_bf16_unavailable();
  EXPECT_NE(why, "");
  EXPECT_NE(why.find("avx2"), std::string::npos) << why;
  const plan::Machine here = plan::this_machine();
  EXPECT_EQ(here.isa, "avx2");
  EXPECT_EQ(here.onednn3_bf16_unavailable, why);
  plan::Plan p;
  p.choose({{"site", false, false, 96, 80, 64, 64, 80, 80, false}}, true, true);
  const auto& ch = p.choices().front();
  const auto& chosen = ch.tried[std::size_t(ch.chosen)];
  EXPECT_TRUE(chosen.verified);
  EXPECT_NE(chosen.name, "onednn3_bf16");
  const auto v3 = std::find_if(ch.tried.begin(), ch.tried.end(), [](const auto& t) { return t.name == "onednn3_bf16"; });
  ASSERT_NE(v3, ch.tried.end());
  EXPECT_FALSE(v3->available);
  EXPECT_EQ(v3->detail, why);
  EXPECT_NE(p.summary().find("onednn3_bf16 not available: " + why), std::string::npos) << p.summary();
}

// Where oneDNN 3 runs a BF16 kernel, the plan verifies it on a site against float64 and can run it alone.
TEST(GemmDnnl3, ThePlanVerifiesItWhereItRuns) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  if (const std::string why = dnnl3::native_bf16_unavailable(); !why.empty()) GTEST_SKIP() << why;
  plan::Machine only = plan::this_machine();
  only.only = {"onednn3_bf16"};
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
      const int m = 96, n = 80, k = 64;
      plan::Plan p;
      p.choose({{"site", ta, tb, m, n, k, ta ? m : k, tb ? k : n, n + 3, false}}, true, true, only);
      const auto& ch = p.choices().front();
      EXPECT_EQ(ch.tried[std::size_t(ch.chosen)].name, "onednn3_bf16");
      EXPECT_TRUE(ch.tried[std::size_t(ch.chosen)].verified) << ch.tried[std::size_t(ch.chosen)].detail;
    }
}

// oneDNN 3's library refers to about a hundred names that 2.6 defines too (dnnl::impl's globals and
// helpers, whose layouts differ between the versions). Loaded into a scope of its own with
// RTLD_DEEPBIND, each of its references binds inside itself; the dynamic loader's own account of
// the bindings (LD_DEBUG=bindings, in a child running the tests above) must show none into 2.6.
TEST(GemmDnnl3, NoneOfItsNamesBindsToDebiansOneDnn) {
  if (!dnnl3::available()) GTEST_SKIP() << dnnl3::unavailable_reason();
  if (!gtb::cpu::dnnl_built()) GTEST_SKIP() << "built without Debian's oneDNN: nothing shares its names";
  char exe[4096] = {0};
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(len, 0);
  const std::string cmd = std::string("LD_DEBUG=bindings '") + exe +
                          "' --gtest_filter=GemmDnnl3.DebiansOneDnnStillAnswersTheLinkedCalls 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string line;
  int from3 = 0, into2 = 0;
  std::string example;
  for (int ch; (ch = std::fgetc(p)) != EOF;) {
    if (ch != '\n') {
      line.push_back(char(ch));
      continue;
    }
    const auto file = line.find("binding file ");
    const auto to = line.find(" to ");
    if (file != std::string::npos && to != std::string::npos && line.find("libdnnl.so.3", file) < to) {
      ++from3;
      if (line.find("libdnnl.so.2", to) != std::string::npos) {
        ++into2;
        if (example.empty()) example = line;
      }
    }
    line.clear();
  }
  EXPECT_EQ(pclose(p), 0);
  EXPECT_GT(from3, 0) << "the loader reported no binding of oneDNN 3's names (LD_DEBUG ignored?)";
  EXPECT_EQ(into2, 0) << example;
}
