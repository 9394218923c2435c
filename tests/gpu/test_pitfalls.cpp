// The pitfalls family on the GPU: every device build variant (default, -lineinfo, -G, fast-math)
// against float64, and the step loops with each habit verified. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/cuda_timing.h"
#include "kernels/pitfalls/cuda/flag_kernels.h"
#include "kernels/pitfalls/cuda/step_loop.h"
#include "kernels/pitfalls/reference.h"

namespace {

namespace pf = gtb::pitfalls;
namespace gc = gtb::cuda;

template <class T>
gc::DeviceBuffer upload(const std::vector<T>& v) {
  gc::DeviceBuffer b(v.size() * sizeof(T) + 4);
  if (!v.empty()) GTB_CUDA_CHECK(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

pf::FlagCheck run_variant(const pf::DeviceKernels& k, const pf::FlagData& d) {
  gc::DeviceBuffer x = upload(d.x), bias = upload(d.bias), g = upload(d.g), labels = upload(d.labels);
  gc::DeviceBuffer out(d.out_size() * 4 + 4), out2(d.out2_size() * 4 + 4);
  GTB_CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
  GTB_CUDA_CHECK(cudaMemset(out2.get(), 0xFF, out2.bytes()));
  cudaError_t e = cudaSuccess;
  switch (d.work) {
    case pf::FlagWork::chain: e = k.chain(x.as<float>(), out.as<float>(), d.n, nullptr); break;
    case pf::FlagWork::act:
      e = k.act(x.as<float>(), bias.as<float>(), g.as<float>(), out.as<float>(), out2.as<float>(), d.rows, pf::kActWidth, nullptr);
      break;
    case pf::FlagWork::xent:
      e = k.xent(x.as<float>(), labels.as<int>(), out.as<float>(), out2.as<float>(), d.rows, pf::kXentClasses, nullptr);
      break;
    case pf::FlagWork::reduce: e = k.reduce(x.as<float>(), out.as<float>(), d.n, nullptr); break;
  }
  GTB_CUDA_CHECK(e);
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(d.out_size()), got2(d.out2_size());
  GTB_CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost));
  if (!got2.empty()) GTB_CUDA_CHECK(cudaMemcpy(got2.data(), out2.get(), got2.size() * 4, cudaMemcpyDeviceToHost));
  return pf::check_flag_output(d, got.data(), got2.data());
}

TEST(PitfallsFlagsGpu, EveryDeviceVariantMatchesFloat64) {
  ASSERT_EQ(pf::device_variants().size(), 4u);
  for (std::size_t n : {std::size_t(1024), std::size_t(37 * 1024)})
    for (pf::FlagWork w : pf::kFlagWorks) {
      const pf::FlagData d = pf::make_flag_data(w, n);
      for (const auto& k : pf::device_variants()) {
        const pf::FlagCheck c = run_variant(k, d);
        EXPECT_TRUE(c.ok) << k.name << " " << pf::to_string(w) << " n=" << n << ": " << c.detail;
        // Fast-math may cost accuracy, but within the check; the others round like the host.
        EXPECT_LT(c.rel_norm_err, std::string(k.name) == "fast_math" ? 1e-4 : 1e-5) << k.name << " " << pf::to_string(w);
      }
    }
}

TEST(PitfallsFlagsGpu, VariantsCarryTheirFlags) {
  EXPECT_NE(std::string(pf::find_device_variant("G")->flags).find("-G"), std::string::npos);
  EXPECT_NE(std::string(pf::find_device_variant("fast_math")->flags).find("--use_fast_math"), std::string::npos);
  EXPECT_EQ(pf::find_device_variant("O3"), nullptr);
}

gtb::mlp::Config small_model() {
  gtb::mlp::Config c;
  c.width = 48;
  c.input = 48;
  c.depth = 3;
  c.classes = 7;
  return c;
}

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
