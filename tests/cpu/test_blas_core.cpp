// OpenBLAS core-type selection: ranking, ISA matching and the decision, on planted CPUs; its
// start-up hook and what the context reports with and without it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtb/blas_core.h"
#include "gtb/context.h"
#include "harness/runtime/startup.h"

namespace {

const std::vector<std::string> kAvx512Bf16 = {"sse4_2", "avx",      "avx2",     "fma",        "avx512f",
                                              "avx512dq", "avx512bw", "avx512vl", "avx512_bf16"};
const std::vector<std::string> kAvx512 = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"};
const std::vector<std::string> kAvx2 = {"sse4_2", "avx", "avx2", "fma"};
const std::vector<std::string> kAvx = {"sse4_2", "avx"};
const std::vector<std::string> kSse = {"sse4_2"};

}  // namespace

TEST(BlasCore, RanksCoreNamesByVectorIsaCaseInsensitively) {
  EXPECT_EQ(gtb::openblas_core_rank("Prescott"), 0);
  EXPECT_EQ(gtb::openblas_core_rank("NEHALEM"), 0);
  EXPECT_EQ(gtb::openblas_core_rank("Sandybridge"), 1);
  EXPECT_EQ(gtb::openblas_core_rank("Haswell"), 2);
  EXPECT_EQ(gtb::openblas_core_rank("Zen"), 2);
  EXPECT_EQ(gtb::openblas_core_rank("SkylakeX"), 3);
  EXPECT_EQ(gtb::openblas_core_rank("cooperlake"), 3);
  EXPECT_EQ(gtb::openblas_core_rank("NeoverseN1"), -1);
  EXPECT_EQ(gtb::openblas_core_rank(""), -1);
}

TEST(BlasCore, MatchingCoreFollowsTheWidestIsa) {
  EXPECT_EQ(gtb::matching_openblas_core(kAvx512Bf16), "Cooperlake");
  EXPECT_EQ(gtb::matching_openblas_core(kAvx512), "SkylakeX");
  EXPECT_EQ(gtb::matching_openblas_core(kAvx2), "Haswell");
  EXPECT_EQ(gtb::matching_openblas_core(kAvx), "Sandybridge");
  EXPECT_EQ(gtb::matching_openblas_core(kSse), "");
  // AVX-512 F alone (Knights Landing) lacks what the SkylakeX kernels use.
  EXPECT_EQ(gtb::matching_openblas_core({"avx", "avx2", "fma", "avx512f"}), "Haswell");
  // AVX2 without FMA is not enough for the Haswell kernels.
  EXPECT_EQ(gtb::matching_openblas_core({"avx", "avx2"}), "Sandybridge");
}

TEST(BlasCore, GenericFallbackOnAnAvx512CpuIsReplaced) {
  // The case the selection exists for: a virtual Xeon whose model OpenBLAS does not know.
  const gtb::CoreChoice c = gtb::choose_openblas_core(kAvx512Bf16, "Prescott");
  EXPECT_EQ(c.core, "Cooperlake");
  EXPECT_NE(c.reason.find("Prescott"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("AVX-512"), std::string::npos) << c.reason;
  EXPECT_EQ(gtb::choose_openblas_core(kAvx512, "Nehalem").core, "SkylakeX");
  EXPECT_EQ(gtb::choose_openblas_core(kAvx2, "Prescott").core, "Haswell");
  EXPECT_EQ(gtb::choose_openblas_core(kAvx512, "Haswell").core, "SkylakeX");
}

TEST(BlasCore, AMatchingOrUnknownChoiceStands) {
  for (const auto& [flags, core] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {kAvx512Bf16, "Cooperlake"}, {kAvx512Bf16, "SkylakeX"}, {kAvx2, "Zen"}, {kAvx, "Sandybridge"}}) {
    const gtb::CoreChoice c = gtb::choose_openblas_core(flags, core);
    EXPECT_EQ(c.core, "") << core;
    EXPECT_NE(c.reason.find(core), std::string::npos) << c.reason;
  }
  EXPECT_EQ(gtb::choose_openblas_core(kAvx512, "ThunderX").core, "");
  EXPECT_EQ(gtb::choose_openblas_core(kSse, "Prescott").core, "");
}

TEST(BlasCore, ProbeOnlyAnswersItsOwnFlag) {
  char exe[] = "gtb-x", other[] = "--gtb_list";
  char* argv[] = {exe, other, nullptr};
  EXPECT_EQ(gtb::blas_probe_main(2, argv), -1);
  EXPECT_EQ(gtb::blas_probe_main(1, argv), -1);
}

TEST(BlasCore, WithoutTheSelectionTheContextSaysItWasNotExamined) {
  // Run before any test installs the selection: a family that does not use OpenBLAS reports the
  // same fields, with the reason saying so.
  ::unsetenv(gtb::kEnvCoretype);
  const gtb::json c = gtb::openblas_core_context();
  EXPECT_EQ(c["source"], "detected");
  EXPECT_EQ(c["detected"], c["corename"]);
  EXPECT_EQ(c["reason"], "not examined: this family does not use OpenBLAS");
  gtb::set_openblas_core_note("planted note");
  EXPECT_EQ(gtb::openblas_core_context()["reason"], "planted note");
  ::setenv(gtb::kEnvCoretype, "Prescott", 1);
  EXPECT_EQ(gtb::openblas_core_source(), "user");
  EXPECT_NE(gtb::openblas_core_context()["reason"].get<std::string>().find("set by the user"), std::string::npos);
  ::unsetenv(gtb::kEnvCoretype);
}

TEST(BlasCore, InstalledSelectionAnswersTheProbeFlagOnly) {
  char exe[] = "gtb-x", list[] = "--gtb_list", probe[] = "--gtb_blas_probe";
  char* plain[] = {exe, list, nullptr};
  char* probing[] = {exe, probe, nullptr};
  EXPECT_EQ(gtb::run_startup_takeover(2, probing), -1) << "nothing installed yet";
  EXPECT_TRUE(gtb::install_openblas_core_selection());
  EXPECT_EQ(gtb::run_startup_takeover(2, plain), -1);
  testing::internal::CaptureStdout();
  const int rc = gtb::run_startup_takeover(2, probing);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(" 1 "), std::string::npos) << "the probe's SGEMM verified: " << out;
}

TEST(BlasCore, TheLoadedOpenBlasRunsOnTheOpenMpTeamConfigureChose) {
  // Configure links Debian's OpenMP flavour by its folder; the loader could still pick the pthread
  // flavour through the alternatives link if the run path were lost. The context must say which.
  const std::string configured = GTB_OPENBLAS_THREADING;
  if (configured == "any") GTEST_SKIP() << "configured without OpenBLAS's OpenMP flavour (libopenblas-openmp-dev)";
  EXPECT_EQ(gtb::openblas_threading(), configured);
  EXPECT_EQ(gtb::host_context()["blas"]["threading"], configured);
}
