// The CPU step in BF16 (autocast through oneMKL) against float64, its refusals, and the step check
// protocol every step workload shares (kernels/train/step_check.h), on a toy workload of its own.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/cpu/mkl.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/step_check.h"

namespace mlp = gtb::mlp;
using gtb::Precision;

namespace {
mlp::Config small_model(mlp::Optim opt) {
  mlp::Config c;
  c.input = 64;
  c.width = 96;
  c.depth = 3;
  c.classes = 10;
  c.act = mlp::Act::gelu;
  c.optim = opt;
  c.lr = opt == mlp::Optim::sgd ? 0.1f : 0.01f;
  return c;
}

// One checked step of `m` on the first `batch` rows at tolerance rtol.
mlp::StepCheck checked_step(mlp::CpuMlp& m, const mlp::Dataset& d, int batch, double rtol) {
  const mlp::StepCase sc = mlp::step_case(m.config(), d, batch, 1, rtol);
  return mlp::check_step_f64(
      mlp::step_probe(m, [&] { return double(m.step(d.x.data(), d.y.data(), batch)); }, batch), sc);
}
}  // namespace

TEST(TrainBf16, RefusesPrecisionsAndLibrariesItCannotRun) {
  mlp::CpuMlp m(small_model(mlp::Optim::sgd), 8);
  EXPECT_EQ(m.precision(), Precision::fp32);
  for (Precision p : {Precision::tf32, Precision::fp16, Precision::bf16_fp32acc})
    EXPECT_THROW(m.set_precision(p), std::invalid_argument) << gtb::to_string(p);
  // BF16 with a library that has no BF16 GEMM here.
  EXPECT_THROW(m.set_precision(Precision::bf16), std::invalid_argument);
  EXPECT_EQ(m.precision(), Precision::fp32);
  if (!gtb::cpu::mkl::available()) {
    try {
      m.set_gemm_lib(gtb::cpu::GemmLib::mkl);
      ADD_FAILURE() << "MKL accepted where it is not available";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(gtb::cpu::mkl::unavailable_reason()), std::string::npos) << e.what();
    }
    GTEST_SKIP() << gtb::cpu::mkl::unavailable_reason();
  }
  m.set_gemm_lib(gtb::cpu::GemmLib::mkl);
  m.set_precision(Precision::bf16);
  EXPECT_EQ(m.precision(), Precision::bf16);
  // Leaving MKL while in BF16 is refused too (the step would silently run FP32).
  EXPECT_THROW(m.set_gemm_lib(gtb::cpu::GemmLib::openblas), std::invalid_argument);
}

class TrainBf16Step : public ::testing::TestWithParam<std::tuple<mlp::Optim, mlp::CpuMlp::Threading>> {};

TEST_P(TrainBf16Step, PassesItsToleranceAndShowsItsRounding) {
  if (!gtb::cpu::mkl::available()) GTEST_SKIP() << gtb::cpu::mkl::unavailable_reason();
  const auto [opt, mode] = GetParam();
  const int batch = 256;  // rows mode at two threads
  const mlp::Dataset d = mlp::make_clusters(batch, 64, 10, 31);
  mlp::CpuMlp m(small_model(opt), batch);
  m.set_threading(mode);
  m.set_gemm_lib(gtb::cpu::GemmLib::mkl);
  m.set_precision(Precision::bf16);
  const std::vector<float> init(m.params(), m.params() + m.layout().total);
  const mlp::StepCheck ok = checked_step(m, d, batch, 1e-2);
  EXPECT_TRUE(ok.ok) << ok.detail;
  EXPECT_TRUE(std::isfinite(ok.loss));
  // The same step held to the FP32 tolerance fails: the GEMMs really ran on rounded operands.
  m.set_params(init);
  m.reset_optimizer();
  const mlp::StepCheck strict = checked_step(m, d, batch, 1e-4);
  EXPECT_FALSE(strict.ok) << strict.detail;
  // And the FP32 step of the same model passes the strict one.
  m.set_params(init);
  m.reset_optimizer();
  m.set_precision(Precision::fp32);
  const mlp::StepCheck fp32 = checked_step(m, d, batch, 1e-4);
  EXPECT_TRUE(fp32.ok) << fp32.detail;
  EXPECT_NEAR(ok.loss, fp32.loss, 1e-2 * fp32.loss);
}

INSTANTIATE_TEST_SUITE_P(All, TrainBf16Step,
                         ::testing::Combine(::testing::Values(mlp::Optim::sgd, mlp::Optim::adam),
                                            ::testing::Values(mlp::CpuMlp::Threading::rows,
                                                              mlp::CpuMlp::Threading::split,
                                                              mlp::CpuMlp::Threading::blas)));

TEST(TrainBf16, TrainsAsFp32Does) {
  if (!gtb::cpu::mkl::available()) GTEST_SKIP() << gtb::cpu::mkl::unavailable_reason();
  const int batch = 128;
  const mlp::Dataset d = mlp::make_clusters(batch, 64, 10, 33);
  float last[2] = {0, 0}, first = 0;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    mlp::CpuMlp m(small_model(mlp::Optim::adam), batch);
    m.set_gemm_lib(gtb::cpu::GemmLib::mkl);
    if (bf16) m.set_precision(Precision::bf16);
    for (int s = 0; s < 30; ++s) {
      const float l = m.step(d.x.data(), d.y.data(), batch);
      if (s == 0 && !bf16) first = l;
      last[bf16] = l;
    }
  }
  EXPECT_LT(last[0], 0.5f * first);
  EXPECT_LT(last[1], 0.5f * first);
  EXPECT_NEAR(last[1], last[0], 0.1 * first);
}

// ---- the step check protocol, on a workload that is not the MLP ----
namespace {
// Four parameters pulled towards a target: grad = 2 (w - target), w -= lr * grad; loss = |w - t|^2.
struct Toy {
  std::vector<float> w{1, -2, 3, 0.5f}, g = std::vector<float>(4), target{0, 0, 1, 1};
  float lr = 0.1f;
  int steps = 0, skipped = 0, counter_reads = 0;
  int skip_next = 0;      // planted mixed-precision skips
  float plant_error = 0;  // added to w[2] after the update
  double step() {
    double loss = 0;
    for (int i = 0; i < 4; ++i) {
      const float d = w[std::size_t(i)] - target[std::size_t(i)];
      loss += double(d) * d;
      g[std::size_t(i)] = 2 * d;
    }
    if (skip_next > 0) {
      --skip_next, ++skipped;
      return loss;
    }
    for (int i = 0; i < 4; ++i) w[std::size_t(i)] -= lr * g[std::size_t(i)];
    w[2] += plant_error;
    ++steps;
    return loss;
  }
  gtb::step::Probe probe() {
    gtb::step::Probe p;
    p.params_before = [this] { return w; };
    p.opt_before = [] { return std::vector<float>{}; };
    p.counters = [this] {
      ++counter_reads;
      return gtb::step::Counters{1.0, steps, skipped};
    };
    p.poison = [this] { std::fill(g.begin(), g.end(), std::nanf("")); };
    p.step = [this] { return step(); };
    p.grads = [this](std::vector<float>&) { return static_cast<const float*>(g.data()); };
    p.params_after = [this](std::vector<float>& storage) {
      storage = w;  // as a device backend would: a copy owned by the check
      return static_cast<const float*>(storage.data());
    };
    return p;
  }
  gtb::step::Workload workload(int attempts = 1) const {
    gtb::step::Workload wl;
    wl.max_attempts = attempts;
    const std::vector<float> t = target;
    const double rate = lr;
    wl.verify = [t, rate](const gtb::step::Taken& k) {
      for (int i = 0; i < 4; ++i) {
        const double w0 = k.params_before[std::size_t(i)], grad = 2 * (w0 - t[std::size_t(i)]);
        if (std::fabs(k.grads[i] - grad) > 1e-5 * (1 + std::fabs(grad)))
          return gtb::step::Verdict{false, "grad " + std::to_string(i)};
        const double w1 = k.skipped ? w0 : w0 - rate * grad;
        if (std::fabs(k.params_after[i] - w1) > 1e-5 * (1 + std::fabs(w1)))
          return gtb::step::Verdict{false, "param " + std::to_string(i)};
      }
      return gtb::step::Verdict{true, "toy step verified"};
    };
    return wl;
  }
};
}  // namespace

TEST(StepProtocol, AcceptsACorrectStepAndReportsWhatItTook) {
  Toy toy;
  const std::vector<float> w0 = toy.w;
  const gtb::step::Result r = gtb::step::check_f64(toy.probe(), toy.workload());
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(r.detail, "toy step verified");
  EXPECT_EQ(r.taken.params_before, w0);
  EXPECT_EQ(r.taken.before.step, 0);
  EXPECT_EQ(r.taken.after.step, 1);
  EXPECT_FALSE(r.taken.skipped);
  EXPECT_EQ(r.taken.grads, nullptr);  // the pointers died with the call
  EXPECT_EQ(toy.counter_reads, 2);
}

TEST(StepProtocol, FailsAWrongUpdateAndANonFiniteLoss) {
  Toy toy;
  toy.plant_error = 1e-3f;
  const gtb::step::Result wrong = gtb::step::check_f64(toy.probe(), toy.workload());
  EXPECT_FALSE(wrong.ok);
  EXPECT_EQ(wrong.detail, "param 2");
  Toy nan_loss;
  gtb::step::Probe p = nan_loss.probe();
  p.step = [&nan_loss] {
    nan_loss.step();
    return std::nan("");
  };
  const gtb::step::Result r = gtb::step::check_f64(p, nan_loss.workload());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "loss is not finite");
}

TEST(StepProtocol, RetriesSkippedStepsAndFailsWhenEveryOneIsSkipped) {
  Toy toy;
  toy.skip_next = 2;
  const gtb::step::Result r = gtb::step::check_f64(toy.probe(), toy.workload(3));
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_EQ(toy.counter_reads, 6);  // twice an attempt
  EXPECT_EQ(r.taken.before.skipped, 2);
  Toy never;
  never.skip_next = 100;
  const gtb::step::Result bad = gtb::step::check_f64(never.probe(), never.workload(4));
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(bad.taken.skipped);
  EXPECT_NE(bad.detail.find("every one of 4 steps overflowed and was skipped"), std::string::npos) << bad.detail;
}

TEST(StepProtocol, RefusesAnIncompleteProbeOrWorkload) {
  Toy toy;
  gtb::step::Probe no_poison = toy.probe();
  no_poison.poison = nullptr;
  EXPECT_THROW(gtb::step::check_f64(no_poison, toy.workload()), std::invalid_argument);
  gtb::step::Workload no_verify = toy.workload();
  no_verify.verify = nullptr;
  EXPECT_THROW(gtb::step::check_f64(toy.probe(), no_verify), std::invalid_argument);
  EXPECT_THROW(gtb::step::check_f64(toy.probe(), toy.workload(0)), std::invalid_argument);
  EXPECT_EQ(toy.steps, 0) << "a refused check takes no step";
}

// A replayed graph's step is compared with the eager one by relative norm: equal passes, a
// gradient off by more than the tolerance fails and the sentence names both norms.
TEST(StepProtocol, ReplayMismatchNamesTheDifference) {
  const std::vector<float> g = {1.0f, -2.0f, 3.0f}, p = {0.5f, 0.25f, -1.0f};
  EXPECT_EQ(gtb::step::replay_mismatch(g, p, g, p, 1e-5), "");
  std::vector<float> g2 = g;
  g2[1] *= 1.01f;
  const std::string why = gtb::step::replay_mismatch(g2, p, g, p, 1e-5);
  EXPECT_NE(why.find("graph replay differs from the eager step: gradients"), std::string::npos) << why;
  EXPECT_EQ(gtb::step::replay_mismatch(g2, p, g, p, 1e-1), "");  // within a looser tolerance
  EXPECT_NEAR(gtb::step::relative_norm_diff(g2, g), 0.02 / std::sqrt(14.0), 1e-6);
  EXPECT_THROW(gtb::step::relative_norm_diff(g, {1.0f}), std::invalid_argument);
}
