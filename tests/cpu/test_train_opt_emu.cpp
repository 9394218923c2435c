// The train family's optimizer kernels (mlp_opt.cu: SGD with momentum, Adam, the end of a step's loss
// scaling), their own code run on CPU threads through the host stand-in of tests/cpu/cuda_emu, with
// and without a 16-bit copy of the weights, against float64; a step with an overflow leaves every
// parameter as it was; a planted indexing error (a grid's last block run as block 0) must fail.
#include <cmath>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

// The kernels' translation unit itself, compiled for the host stand-in.
#include "kernels/train/cuda/mlp_opt.cu"

#include "kernels/common/random.h"
#include "kernels/common/verify.h"

namespace {
namespace gm = gtb::cuda::mlp;

constexpr std::size_t kN = 50000;  // 128 blocks on the stand-in device: the loops stride
constexpr float kLr = 0.01f, kMu = 0.9f, kB1 = 0.9f, kB2 = 0.999f, kEps = 1e-8f;

struct Data {
  std::vector<float> w, m, v, g;
};
Data data() {
  Data d{std::vector<float>(kN), std::vector<float>(kN), std::vector<float>(kN), std::vector<float>(kN)};
  gtb::fill_uniform(d.w.data(), kN, 41, -1.0f, 1.0f);
  gtb::fill_uniform(d.m.data(), kN, 42, -0.1f, 0.1f);
  gtb::fill_uniform(d.v.data(), kN, 43, 1e-4f, 1e-2f);
  gtb::fill_uniform(d.g.data(), kN, 44, -4.0f, 4.0f);
  return d;
}

// One optimizer step (Adam or SGD), as written and with the planted error; `inf`: the step found an
// overflow and must change nothing.
void check(bool adam, bool with_lowp, bool inf) {
  const Data d0 = data();
  gtb::mlp::ScaleState ss0{4.0f, inf ? 1 : 0, 0, 0, 2};
  for (bool plant : {false, true}) {
    Data d = d0;
    gtb::mlp::ScaleState ss = ss0;
    std::vector<__half> lowp(kN, __float2half_rn(NAN));
    gtb_emu::plant_last_block_as_first = plant;
    if (adam)
      gm::adam(d.w.data(), d.m.data(), d.v.data(), d.g.data(), with_lowp ? lowp.data() : nullptr, gm::DType::f16, kN,
               kLr, kB1, kB2, kEps, &ss, nullptr);
    else
      gm::sgd(d.w.data(), d.v.data(), d.g.data(), with_lowp ? lowp.data() : nullptr, gm::DType::f16, kN, kLr, kMu, &ss,
              nullptr);
    gtb_emu::plant_last_block_as_first = false;
    std::vector<double> rw(kN), rm(kN), rv(kN), rl(kN);
    double c1, c2;
    gtb::mlp::adam_corrections(ss0.step + 1, double(kB1), double(kB2), c1, c2);
    for (std::size_t i = 0; i < kN; ++i) {
      double w = d0.w[i], m = d0.m[i], v = d0.v[i];
      const double g = double(d0.g[i]) / ss0.scale;
      if (!inf) {
        if (adam)
          gtb::mlp::adam(w, m, v, g, double(kLr), double(kB1), double(kB2), double(kEps), c1, c2);
        else
          gtb::mlp::sgd_momentum(w, v, g, double(kLr), double(kMu));
      }
      rw[i] = w, rm[i] = m, rv[i] = v, rl[i] = __half2float(__float2half_rn(float(w)));
    }
    std::vector<float> lw(kN);
    for (std::size_t i = 0; i < kN; ++i) lw[i] = __half2float(lowp[i]);
    bool ok = gtb::compare_elementwise(d.w.data(), rw.data(), kN, 1e-5, 1e-7).ok &&
              gtb::compare_elementwise(d.v.data(), rv.data(), kN, 1e-5, 1e-9).ok;
    if (adam) ok = ok && gtb::compare_elementwise(d.m.data(), rm.data(), kN, 1e-5, 1e-8).ok;
    // The 16-bit copy follows the updated weights; after an overflow it is not written.
    if (with_lowp && !inf) ok = ok && gtb::compare_elementwise(lw.data(), rl.data(), kN, std::ldexp(1.0, -10), 1e-7).ok;
    if (inf) ok = ok && std::isnan(lw[0]) && std::isnan(lw[kN - 1]);
    const char* what = adam ? "adam" : "sgd";
    if (plant && !inf) {
      EXPECT_FALSE(ok) << what << ": the planted indexing error passed";
    } else if (!plant) {
      EXPECT_TRUE(ok) << what << (with_lowp ? " with the f16 copy" : "") << (inf ? " after an overflow" : "");
    }
  }
}

TEST(TrainOptimizerKernelsEmulated, SgdAndAdamMatchFloat64) {
  for (bool adam : {false, true})
    for (bool lowp : {false, true}) check(adam, lowp, false);
}

TEST(TrainOptimizerKernelsEmulated, AStepWithAnOverflowChangesNothing) {
  for (bool adam : {false, true}) check(adam, true, true);
}

TEST(TrainOptimizerKernelsEmulated, ScaleEndIsTheHostRule) {
  for (int found_inf : {0, 1})
    for (bool dynamic : {false, true}) {
      gtb::mlp::ScaleState dev{1024.0f, found_inf, 1999, 3, 7}, host = dev;
      gm::scale_end(&dev, dynamic, 2000, nullptr);
      gtb::mlp::loss_scale_end_step(host, dynamic, 2000);
      EXPECT_EQ(dev.scale, host.scale);
      EXPECT_EQ(dev.found_inf, host.found_inf);
      EXPECT_EQ(dev.good_steps, host.good_steps);
      EXPECT_EQ(dev.skipped, host.skipped);
      EXPECT_EQ(dev.step, host.step);
      EXPECT_NE(std::make_tuple(dev.scale, dev.good_steps, dev.skipped, dev.step),
                std::make_tuple(1024.0f, 1999, 3, 7));  // the step did change the state
    }
}

}  // namespace
