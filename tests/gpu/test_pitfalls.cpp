// The pitfalls family on the GPU: every device build variant (default, -lineinfo, -G, fast-math)
// against float64, and the step loops with each habit verified. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/pitfalls/cuda/flag_kernels.h"
#include "kernels/pitfalls/cuda/flag_run.h"
#include "kernels/pitfalls/cuda/step_loop.h"
#include "kernels/pitfalls/reference.h"
#include "tests/common/flag_variants.h"
#include "tests/common/small_configs.h"

namespace {

namespace pf = gtb::pitfalls;

pf::FlagCheck run_variant(const pf::DeviceKernels& k, const pf::FlagData& d) {
  pf::DeviceFlagRun run(d);
  run.enqueue(k, nullptr);
  return run.check();
}

TEST(PitfallsFlagsGpu, EveryDeviceVariantMatchesFloat64) {
  ASSERT_EQ(pf::device_variants().size(), 4u);
  // Fast-math may cost accuracy, but within the check; the others round like the host.
  gtb::test::expect_variants_match_float64(
      pf::device_variants(), {std::size_t(1024), std::size_t(37 * 1024)}, run_variant,
      [](const pf::DeviceKernels& k) { return std::string(k.name) == "fast_math" ? 1e-4 : 1e-5; });
}

TEST(PitfallsFlagsGpu, VariantsCarryTheirFlags) {
  EXPECT_NE(std::string(pf::find_device_variant("G")->flags).find("-G"), std::string::npos);
  EXPECT_NE(std::string(pf::find_device_variant("fast_math")->flags).find("--use_fast_math"), std::string::npos);
  EXPECT_EQ(pf::find_device_variant("O3"), nullptr);
}

gtb::mlp::Config small_model() { return gtb::test::mlp_config(48, 48, 3, 7); }

TEST(PitfallsStepsGpu, EveryHabitKeepsTheStepCorrect) {
  for (pf::Copy c : pf::kCopies) {
    pf::GpuStepLoop loop(small_model(), 64, c, c == pf::Copy::none ? 1 : 0);
    const gtb::mlp::VerifyResult v = loop.verify_first_step();
    EXPECT_TRUE(v.ok) << pf::to_string(c) << ": " << v.detail;
    loop.run(5);
    loop.sync();
  }
}

TEST(PitfallsStepsGpu, LossIsReadEveryKSteps) {
  pf::GpuStepLoop loop(small_model(), 32, pf::Copy::none, 10);
  loop.run(100);
  loop.sync();
  EXPECT_EQ(loop.loss_reads(), 10);
  EXPECT_TRUE(std::isfinite(loop.last_loss()));
}

}  // namespace
