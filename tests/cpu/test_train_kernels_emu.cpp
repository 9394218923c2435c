// The train family's elementwise CUDA kernels (mlp_fwd.cu: bias + activation, the cast to 16 bits;
// test_train_opt_emu.cpp: the optimizers), their own code run on CPU threads through the host
// stand-in of tests/cpu/cuda_emu (a device of two SMs, so the grid-stride loops stride), in FP32, FP16
// and BF16, against float64; a planted indexing error (a grid's last block run as block 0) must fail
// every check. The backward kernels run in test_train_bwd_emu.cpp.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in, and check.cpp's error path.
#include "kernels/common/cuda/check.cpp"
#include "kernels/train/cuda/mlp_fwd.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "tests/cpu/train_emu_dtype.h"

namespace {
namespace gm = gtb::cuda::mlp;

// rows x cols = 50000 elements: 196 blocks wanted, 128 on the stand-in device, so the loops stride.
constexpr int kRows = 250, kCols = 200;
constexpr std::size_t kN = std::size_t(kRows) * kCols;

using gtb_train_emu::name;
using gtb_train_emu::narrow;
using gtb_train_emu::ulp;
using gtb_train_emu::widen;

// Runs bias + activation (and the cast) of type T, as written and with the planted error.
template <class T>
void check_type(gm::DType t) {
  std::vector<float> zf(kN), b(kCols);
  gtb::fill_uniform(zf.data(), kN, 31, -3.0f, 3.0f);
  gtb::fill_uniform(b.data(), kCols, 32, -0.5f, 0.5f);
  const std::vector<T> z0 = narrow<T>(zf);
  for (gtb::mlp::Act act : {gtb::mlp::Act::relu, gtb::mlp::Act::gelu})
    for (bool plant : {false, true}) {
      std::vector<T> z = z0, a(kN, gm::from_f<T>(NAN));
      gtb_emu::plant_last_block_as_first = plant;
      gm::bias_act(t, z.data(), a.data(), b.data(), kRows, kCols, act, nullptr);
      gtb_emu::plant_last_block_as_first = false;
      std::vector<double> rz(kN), ra(kN);
      for (std::size_t i = 0; i < kN; ++i) {
        rz[i] = double(gm::to_f(z0[i])) + b[i % kCols];
        ra[i] = gtb::mlp::act_forward(act, double(gm::to_f(gm::from_f<T>(float(rz[i])))));
      }
      const auto ez = gtb::compare_elementwise(widen(z).data(), rz.data(), kN, ulp(t), 1e-6);
      const auto ea = gtb::compare_elementwise(widen(a).data(), ra.data(), kN, 2 * ulp(t), 1e-5);
      if (plant) {
        EXPECT_FALSE(ez.ok && ea.ok) << name(t) << ": the planted indexing error passed";
      } else {
        EXPECT_TRUE(ez.ok) << name(t) << " z: " << ez.detail;
        EXPECT_TRUE(ea.ok) << name(t) << " a: " << ea.detail;
      }
    }
  if (t == gm::DType::f32) return;
  for (bool plant : {false, true}) {
    std::vector<T> dst(kN, gm::from_f<T>(NAN));
    gtb_emu::plant_last_block_as_first = plant;
    gm::to_lowp(t, zf.data(), dst.data(), kN, nullptr);
    gtb_emu::plant_last_block_as_first = false;
    const std::vector<double> ref(zf.begin(), zf.end());
    const auto e = gtb::compare_elementwise(widen(dst).data(), ref.data(), kN, ulp(t), 0.0);
    EXPECT_EQ(e.ok, !plant) << name(t) << " to_lowp" << (plant ? ": the planted error passed" : ": " + e.detail);
  }
}

TEST(TrainKernelsEmulated, BiasActivationAndCastEveryType) {
  check_type<float>(gm::DType::f32);
  check_type<__half>(gm::DType::f16);
  check_type<__nv_bfloat16>(gm::DType::bf16);
}

TEST(TrainKernelsEmulated, KernelInfoReadsTheStandInDevice) {
  const auto info = gm::fwd_kernel_info(gm::DType::f16, kRows, kCols);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0].grid, 128);  // capped at 8 waves of the two SMs' 8 blocks
  EXPECT_GT(info[0].waves, 0.0);
}

}  // namespace
