// CPU tests of the train family: shared math, the step against float64, gradients, learning,
// the verifier, the crossover findings and out-of-memory handling.
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "bench/train/findings.h"
#include "harness/model/cost_model.h"
#include "gtb/gtb.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/train/cpu/mlp.h"
#include "kernels/train/mlp.h"
#include "tests/common/named_record.h"
#include "tests/common/small_configs.h"

namespace mlp = gtb::mlp;

namespace {

mlp::Config tiny(mlp::Act act, mlp::Optim opt) {
  mlp::Config c = gtb::test::mlp_config(12, 20, 3, 5, act, opt);
  c.lr = opt == mlp::Optim::sgd ? 0.1f : 0.01f;
  c.seed = 77;
  return c;
}

std::vector<double> to_double(const float* p, std::size_t n) { return std::vector<double>(p, p + n); }

// |got - ref| <= atol + rtol * |ref| for all, with a message naming the first failure.
::testing::AssertionResult close(const float* got, const std::vector<double>& ref, double rtol, double atol) {
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (!(std::fabs(double(got[i]) - ref[i]) <= atol + rtol * std::fabs(ref[i])))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << ref[i];
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(TrainMath, ActivationValues) {
  EXPECT_EQ(mlp::act_forward(mlp::Act::relu, -2.0f), 0.0f);
  EXPECT_EQ(mlp::act_forward(mlp::Act::relu, 3.0f), 3.0f);
  EXPECT_EQ(mlp::act_derivative(mlp::Act::relu, -0.5f), 0.0f);
  EXPECT_EQ(mlp::act_derivative(mlp::Act::relu, 0.5f), 1.0f);
  EXPECT_NEAR(mlp::act_forward(mlp::Act::gelu, 1.0), 0.8411919906, 1e-9);   // tanh-form GELU(1)
  EXPECT_NEAR(mlp::act_forward(mlp::Act::gelu, -1.0), -0.1588080094, 1e-9);
  EXPECT_EQ(mlp::act_forward(mlp::Act::gelu, 0.0), 0.0);
}

TEST(TrainMath, FloatTanhIsAccurate) {
  double worst = 0;
  for (int i = -120000; i <= 120000; ++i) {
    const float x = float(i) * 1e-4f;
    const double ref = std::tanh(double(x));
    worst = std::max(worst, std::fabs(double(mlp::hd_tanh(x)) - ref) / std::max(std::fabs(ref), 1e-30));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_EQ(mlp::hd_tanh(0.0f), 0.0f);
  EXPECT_NEAR(mlp::hd_tanh(50.0f), 1.0f, 1e-6f);
  EXPECT_NEAR(mlp::hd_tanh(-50.0f), -1.0f, 1e-6f);
}

TEST(TrainMath, GeluDerivativeMatchesFiniteDifference) {
  for (double z : {-3.0, -1.2, -0.3, 0.0, 0.4, 1.0, 2.5}) {
    const double h = 1e-6;
    const double fd = (mlp::act_forward(mlp::Act::gelu, z + h) - mlp::act_forward(mlp::Act::gelu, z - h)) / (2 * h);
    EXPECT_NEAR(mlp::act_derivative(mlp::Act::gelu, z), fd, 1e-8) << "z = " << z;
  }
}

TEST(TrainMath, SoftmaxCrossEntropyRow) {
  // Equal logits: loss log(C), gradient 1/C - onehot (times scale).
  const double z[4] = {2.0, 2.0, 2.0, 2.0};
  double g[4];
  const double loss = mlp::softmax_xent_row<double>(
      4, 1, 0.5, [&](int j) { return z[j]; }, [&](int j, double v) { g[j] = v; });
  EXPECT_NEAR(loss, std::log(4.0), 1e-12);
  EXPECT_NEAR(g[0], 0.5 * 0.25, 1e-12);
  EXPECT_NEAR(g[1], 0.5 * (0.25 - 1.0), 1e-12);
  // Large logits must not overflow (the max is subtracted).
  const float big[3] = {1000.0f, 0.0f, -1000.0f};
  float gb[3];
  const float lb = mlp::softmax_xent_row<float>(
      3, 0, 1.0f, [&](int j) { return big[j]; }, [&](int j, float v) { gb[j] = v; });
  EXPECT_TRUE(std::isfinite(lb));
  EXPECT_NEAR(lb, 0.0f, 1e-6f);
  EXPECT_NEAR(gb[0], 0.0f, 1e-6f);
}

// The CPU step's loss over rows (the bias added in place, the gradient and its column sums added): row
// by row what softmax_xent_row gives on the biased logits, the column sums added onto what was there.
TEST(TrainMath, SoftmaxCrossEntropyRowsAddTheBiasAndTheColumnSums) {
  const std::size_t rows = 3, C = 4;
  std::vector<float> z = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, 1.5f, -0.5f, 3.0f, -2.0f, 0.25f, 0.75f, 1.0f};
  const std::vector<float> z0 = z, b = {0.1f, -0.2f, 0.3f, 0.4f};
  const int labels[3] = {2, 0, 3};
  std::vector<float> dz(rows * C, -7.0f), colsum = {1.0f, 2.0f, 3.0f, 4.0f};
  const double loss = mlp::softmax_xent_rows(z.data(), dz.data(), b.data(), labels, rows, C, 0.25f, colsum.data());
  double want = 0;
  std::vector<double> sums = {1.0, 2.0, 3.0, 4.0};
  for (std::size_t r = 0; r < rows; ++r) {
    double g[4];
    want += mlp::softmax_xent_row<double>(
        int(C), labels[r], 0.25, [&](int j) { return double(z0[r * C + j]) + double(b[std::size_t(j)]); },
        [&](int j, double v) { g[j] = v; });
    for (std::size_t j = 0; j < C; ++j) {
      EXPECT_NEAR(z[r * C + j], z0[r * C + j] + b[j], 1e-6) << r << "," << j;
      EXPECT_NEAR(dz[r * C + j], g[j], 1e-6) << r << "," << j;
      sums[j] += g[j];
    }
  }
  EXPECT_NEAR(loss, want, 1e-5);
  for (std::size_t j = 0; j < C; ++j) EXPECT_NEAR(colsum[j], sums[j], 1e-6) << j;
}

TEST(TrainMath, Optimizers) {
  double w = 1.0, v = 0.5;
  mlp::sgd_momentum(w, v, 2.0, 0.1, 0.9);  // v = 0.45 + 2 = 2.45; w = 1 - 0.245
  EXPECT_NEAR(v, 2.45, 1e-12);
  EXPECT_NEAR(w, 0.755, 1e-12);
  // Adam's first step moves by lr * g / (|g| + eps') whatever the gradient's size.
  double c1, c2;
  mlp::adam_corrections(1, 0.9, 0.999, c1, c2);
  EXPECT_NEAR(c1, 10.0, 1e-9);
  EXPECT_NEAR(c2, 1000.0, 1e-6);
  double wa = 0.0, m = 0, s = 0;
  mlp::adam(wa, m, s, -3.0, 0.01, 0.9, 0.999, 1e-8, c1, c2);
  EXPECT_NEAR(wa, 0.01, 1e-8);
}

TEST(TrainMath, DenormalsAreFlushed) {
  EXPECT_EQ(mlp::flush_denormal(1e-39f), 0.0f);
  EXPECT_EQ(mlp::flush_denormal(-1e-39f), 0.0f);
  EXPECT_EQ(mlp::flush_denormal(1.2e-38f), 1.2e-38f);  // the smallest normal floats stay
  EXPECT_EQ(mlp::flush_denormal(-0.5f), -0.5f);
  EXPECT_TRUE(std::isnan(mlp::flush_denormal(std::nanf(""))));
}

// A state planted below the smallest normal float (as a momentum decays under zero gradients) leaves
// the CPU optimizers flushed: no denormal is left to slow the next steps down. Padding and a dead
// unit's weights have zero gradients, so their state is the decayed planted value.
TEST(TrainStep, OptimizerStateHoldsNoDenormals) {
  for (const mlp::Optim opt : {mlp::Optim::sgd, mlp::Optim::adam}) {
    mlp::CpuMlp m(tiny(mlp::Act::relu, opt), 8);
    const mlp::Dataset d = mlp::make_clusters(8, 12, 5, 1);
    const std::size_t n = m.layout().total * std::size_t(m.opt_state_count());
    std::fill(m.opt_state(), m.opt_state() + n, 1e-39f);
    m.step(d.x.data(), d.y.data(), 8, 1);
    std::size_t denormal = 0;
    for (std::size_t i = 0; i < n; ++i) denormal += std::fpclassify(m.opt_state()[i]) == FP_SUBNORMAL;
    EXPECT_EQ(denormal, 0u) << mlp::to_string(opt) << ": " << denormal << " of " << n << " state entries";
  }
}

// The step's pieces: its GEMM calls and its update take part of each step's time, never more than
// all of it, in every threading mode; reset clears them. A model with no steps has none.
TEST(TrainStep, PiecesSplitTheStepsTime) {
  // Width 160, batch 64: above the serial FLOPs, so rows mode runs where there are two threads.
  const mlp::Config c = mlp::bench_config(160);
  for (const auto threading : {mlp::CpuMlp::Threading::rows, mlp::CpuMlp::Threading::split}) {
    mlp::CpuMlp m(c, 64);
    m.set_threading(threading);
    const mlp::Dataset d = mlp::make_clusters(64, c.input, c.classes, 1);
    EXPECT_EQ(m.pieces().steps, 0);
    for (int i = 0; i < 5; ++i) m.step(d.x.data(), d.y.data(), 64, 1);
    const mlp::CpuMlp::Pieces& p = m.pieces();
    EXPECT_EQ(p.steps, 5);
    EXPECT_GT(p.gemm, 0.0);
    EXPECT_GT(p.optimizer, 0.0);
    EXPECT_LE(p.gemm + p.optimizer, p.total);
    m.reset_pieces();
    EXPECT_EQ(m.pieces().steps, 0);
    EXPECT_EQ(m.pieces().total, 0.0);
  }
}

// The cost model knows which native steps run on one thread (its update then reads its own writes).
TEST(TrainStep, TheCostModelKnowsTheSerialRule) {
  // The model counts a step's FLOPs as the step does: the same configurations, on both sides of the
  // threshold, run on one thread in both.
  for (int width : {64, 256})
    for (int batch : {1, 16, 64, 100, 256}) {
      const mlp::Config cfg = mlp::bench_config(width, 4);
      const bool step_serial = mlp::step_flops(mlp::Layout(cfg), batch) < mlp::kSerialStepFlops;
      const gtb::cost::StepConfig c = gtb::cost::config_from_json(
          {{"model", "mlp"}, {"width", width}, {"depth", 4}, {"input", cfg.input}, {"classes", cfg.classes},
           {"batch", batch}, {"input_bytes_per_sample", 0}});
      EXPECT_EQ(gtb::cost::runs_on_one_thread(c, gtb::Backend::cpu), step_serial) << width << " x " << batch;
    }
}

TEST(TrainMath, LossScaleStateMachine) {
  mlp::ScaleState s{1024.0f, 0, 0, 0, 0};
  s.found_inf = 1;
  mlp::loss_scale_end_step(s, true, 2);
  EXPECT_EQ(s.scale, 512.0f);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.step, 0);
  EXPECT_EQ(s.found_inf, 0);
  mlp::loss_scale_end_step(s, true, 2);
  mlp::loss_scale_end_step(s, true, 2);
  EXPECT_EQ(s.scale, 1024.0f);  // grew after 2 good steps
  EXPECT_EQ(s.step, 2);
  mlp::loss_scale_end_step(s, false, 1);
  EXPECT_EQ(s.scale, 1024.0f);  // static scaling never grows
}

TEST(TrainMath, HalfAndBfloat16Conversions) {
  EXPECT_EQ(mlp::half_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(mlp::half_bits_to_float(0xC000), -2.0f);
  EXPECT_EQ(mlp::half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(mlp::half_bits_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(mlp::half_bits_to_float(0xFFFF)));
  EXPECT_EQ(mlp::half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(mlp::half_bits_to_float(0x0200), std::ldexp(1.0f, -15));
  EXPECT_EQ(mlp::bf16_bits_to_float(0x3F80), 1.0f);
  EXPECT_EQ(mlp::bf16_bits_to_float(0xC040), -3.0f);
}

TEST(TrainLayout, AlignedAndBiasesContiguous) {
  mlp::Config c = tiny(mlp::Act::relu, mlp::Optim::sgd);
  const mlp::Layout lay(c);
  ASSERT_EQ(lay.layers(), 3);
  EXPECT_EQ(lay.dims, (std::vector<int>{12, 20, 20, 5}));
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(lay.w[std::size_t(l)] % mlp::Layout::kAlign, 0u);
    EXPECT_EQ(lay.b[std::size_t(l)] % mlp::Layout::kAlign, 0u);
    EXPECT_LT(lay.w[std::size_t(l)], lay.bias_begin);
    EXPECT_GE(lay.b[std::size_t(l)], lay.bias_begin);
  }
  EXPECT_EQ(lay.parameters(), std::size_t(12 * 20 + 20 + 20 * 20 + 20 + 20 * 5 + 5));
  EXPECT_DOUBLE_EQ(mlp::step_flops(lay, 10), 6.0 * 10 * (12 * 20 + 20 * 20 + 20 * 5));
  // Executed: no input gradient of the first layer (2 * B * 12 * 20 fewer).
  EXPECT_DOUBLE_EQ(mlp::executed_step_flops(lay, 10), 6.0 * 10 * (12 * 20 + 20 * 20 + 20 * 5) - 2.0 * 10 * 12 * 20);
}

TEST(TrainConfig, RejectsBadInput) {
  mlp::Config c = tiny(mlp::Act::relu, mlp::Optim::sgd);
  c.classes = 1;
  EXPECT_THROW(c.validate(), std::invalid_argument);
  EXPECT_THROW(mlp::act_from_string("tanh"), std::invalid_argument);
  EXPECT_THROW(mlp::optim_from_string("lbfgs"), std::invalid_argument);
  mlp::CpuMlp m(tiny(mlp::Act::relu, mlp::Optim::sgd), 8);
  const mlp::Dataset d = mlp::make_clusters(16, 12, 5, 1);
  EXPECT_THROW(m.step(d.x.data(), d.y.data(), 6, 4), std::invalid_argument);   // not a multiple
  EXPECT_THROW(m.step(d.x.data(), d.y.data(), 16, 1), std::invalid_argument);  // over max rows
  EXPECT_THROW(mlp::CpuMlp(c, 8), std::invalid_argument);
}

class TrainStepVsReference : public ::testing::TestWithParam<std::tuple<mlp::Act, mlp::Optim, int>> {};

TEST_P(TrainStepVsReference, TwoStepsMatchFloat64) {
  const auto [act, opt, micro] = GetParam();
  const mlp::Config c = tiny(act, opt);
  const int batch = 8;
  const mlp::Dataset d = mlp::make_clusters(batch, c.input, c.classes, 5);
  mlp::CpuMlp m(c, batch / micro);
  const std::size_t n = m.layout().total;
  std::vector<double> p = to_double(m.params(), n);
  std::vector<double> o(n * std::size_t(m.opt_state_count()), 0.0);
  for (int s = 0; s < 2; ++s) {
    const mlp::RefStep ref = mlp::reference_step(c, p, o, s, d.x.data(), d.y.data(), batch);
    const float loss = m.step(d.x.data(), d.y.data(), batch, micro);
    EXPECT_NEAR(loss, ref.loss, 1e-5 * (1 + ref.loss)) << "step " << s;
    EXPECT_TRUE(close(m.grads(), ref.grads, 1e-4, 1e-6)) << "gradients, step " << s;
    EXPECT_TRUE(close(m.params(), ref.params_after, 1e-5, 1e-6)) << "params, step " << s;
    EXPECT_TRUE(close(m.opt_state(), ref.opt_after, 1e-4, 1e-6)) << "optimizer state, step " << s;
    p = ref.params_after;
    o = ref.opt_after;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, TrainStepVsReference,
    ::testing::Values(std::make_tuple(mlp::Act::relu, mlp::Optim::sgd, 1), std::make_tuple(mlp::Act::gelu, mlp::Optim::sgd, 1),
                      std::make_tuple(mlp::Act::relu, mlp::Optim::adam, 1), std::make_tuple(mlp::Act::gelu, mlp::Optim::adam, 1),
                      std::make_tuple(mlp::Act::relu, mlp::Optim::sgd, 4), std::make_tuple(mlp::Act::gelu, mlp::Optim::adam, 2)));

TEST(TrainStepThreading, GemmLibraryNotBuiltInIsRefused) {
  mlp::CpuMlp m(tiny(mlp::Act::relu, mlp::Optim::sgd), 4);
  EXPECT_EQ(m.gemm_lib(), gtb::cpu::GemmLib::openblas);
  if (gtb::cpu::gemm_lib_available(gtb::cpu::GemmLib::onednn)) {
    m.set_gemm_lib(gtb::cpu::GemmLib::onednn);
    EXPECT_EQ(m.gemm_lib(), gtb::cpu::GemmLib::onednn);
  } else {
    EXPECT_THROW(m.set_gemm_lib(gtb::cpu::GemmLib::onednn), std::invalid_argument);
  }
}

TEST(TrainStepThreading, EveryModeAndGemmLibraryMatchesFloat64) {
  // Large enough for the rows mode (32 rows per thread) with micro-batches, on any thread count.
  const mlp::Config c = tiny(mlp::Act::gelu, mlp::Optim::adam);
  const int batch = 512;
  const mlp::Dataset d = mlp::make_clusters(batch, c.input, c.classes, 15);
  for (auto lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn, gtb::cpu::GemmLib::mkl})
    for (auto mode : {mlp::CpuMlp::Threading::rows, mlp::CpuMlp::Threading::split, mlp::CpuMlp::Threading::blas})
      for (int micro : {1, 2}) {
        if (!gtb::cpu::gemm_lib_available(lib)) continue;
        mlp::CpuMlp m(c, batch / micro);
        m.set_threading(mode);
        m.set_gemm_lib(lib);
        SCOPED_TRACE(gtb::cpu::to_string(lib));
        const std::size_t n = m.layout().total;
        std::vector<double> p = to_double(m.params(), n), o(2 * n, 0.0);
        for (int s = 0; s < 2; ++s) {
          const mlp::RefStep ref = mlp::reference_step(c, p, o, s, d.x.data(), d.y.data(), batch);
          const float loss = m.step(d.x.data(), d.y.data(), batch, micro);
          EXPECT_NEAR(loss, ref.loss, 1e-5 * (1 + ref.loss));
          EXPECT_TRUE(close(m.grads(), ref.grads, 1e-4, 1e-6)) << "mode " << int(mode) << " micro " << micro;
          EXPECT_TRUE(close(m.params(), ref.params_after, 1e-5, 1e-6)) << "mode " << int(mode) << " micro " << micro;
          p = ref.params_after;
          o = ref.opt_after;
        }
      }
}

TEST(TrainGradient, FiniteDifferenceMatchesAnalytic) {
  for (mlp::Act act : {mlp::Act::gelu, mlp::Act::relu}) {
    mlp::Config c = tiny(act, mlp::Optim::sgd);
    c.input = 5, c.width = 6, c.classes = 3;
    const mlp::Layout lay(c);
    const int batch = 4;
    const mlp::Dataset d = mlp::make_clusters(batch, c.input, c.classes, 9);
    std::vector<float> pf = mlp::init_params(c, lay);
    std::vector<double> p(pf.begin(), pf.end());
    const mlp::RefStep r = mlp::reference_step(c, p, std::vector<double>(lay.total, 0.0), 0, d.x.data(), d.y.data(), batch);
    int checked = 0;
    for (int l = 0; l < lay.layers(); ++l) {
      const std::size_t nw = std::size_t(lay.dims[std::size_t(l)]) * std::size_t(lay.dims[std::size_t(l) + 1]);
      for (std::size_t k = 0; k < nw + std::size_t(lay.dims[std::size_t(l) + 1]); k += 3) {
        const std::size_t i = k < nw ? lay.w[std::size_t(l)] + k : lay.b[std::size_t(l)] + (k - nw);
        const double h = 1e-6, keep = p[i];
        p[i] = keep + h;
        const double up = mlp::reference_loss(c, p, d.x.data(), d.y.data(), batch);
        p[i] = keep - h;
        const double dn = mlp::reference_loss(c, p, d.x.data(), d.y.data(), batch);
        p[i] = keep;
        const double fd = (up - dn) / (2 * h);
        EXPECT_NEAR(r.grads[i], fd, 1e-6 + 1e-4 * std::fabs(fd)) << mlp::to_string(act) << " param " << i;
        ++checked;
      }
    }
    EXPECT_GT(checked, 20);
  }
}

TEST(TrainLearning, LossGoesDownOnClusters) {
  for (mlp::Optim opt : {mlp::Optim::sgd, mlp::Optim::adam}) {
    mlp::Config c;
    c.input = 32, c.width = 64, c.depth = 3, c.classes = 4, c.optim = opt, c.act = mlp::Act::relu;
    c.lr = opt == mlp::Optim::sgd ? 0.05f : 3e-3f;
    const int batch = 128;
    const mlp::Dataset d = mlp::make_clusters(batch, c.input, c.classes, 21, 1.0f);
    mlp::CpuMlp m(c, batch);
    const float first = m.step(d.x.data(), d.y.data(), batch);
    float last = first;
    for (int s = 0; s < 40; ++s) last = m.step(d.x.data(), d.y.data(), batch);
    EXPECT_TRUE(std::isfinite(last));
    EXPECT_LT(last, 0.3f * first) << mlp::to_string(opt) << ": first " << first << " last " << last;
  }
}

namespace {
// One checked step of a small model; returns the view with copies the test can corrupt.
struct Checked {
  mlp::Config cfg = tiny(mlp::Act::gelu, mlp::Optim::sgd);
  mlp::Dataset data = mlp::make_clusters(16, 12, 5, 3);
  std::vector<float> p0, o0, grads, p1;
  std::vector<std::vector<float>> z, a, dz;
  mlp::StepView view() {
    mlp::StepView v;
    v.cfg = &cfg;
    v.rows = 16;
    v.x = data.x.data();
    v.labels = data.y.data();
    v.norm_rows = 16;
    v.fetch = [this](mlp::Tensor t, int l) {
      return t == mlp::Tensor::z ? z[std::size_t(l)] : (t == mlp::Tensor::a ? a[std::size_t(l)] : dz[std::size_t(l)]);
    };
    v.params_before = p0.data();
    v.opt_before = o0.data();
    v.grads = grads.data();
    v.params_after = p1.data();
    return v;
  }
  Checked() {
    mlp::CpuMlp m(cfg, 16);
    const std::size_t n = m.layout().total;
    p0.assign(m.params(), m.params() + n);
    o0.assign(n, 0.0f);
    m.poison();
    m.step(data.x.data(), data.y.data(), 16);
    grads.assign(m.grads(), m.grads() + n);
    p1.assign(m.params(), m.params() + n);
    z.resize(4), a.resize(4), dz.resize(4);
    for (int l = 1; l <= 3; ++l) {
      const std::size_t sz = 16u * std::size_t(m.layout().dims[std::size_t(l)]);
      z[std::size_t(l)].assign(m.z(l), m.z(l) + sz);
      dz[std::size_t(l)].assign(m.dz(l), m.dz(l) + sz);
      if (l < 3) a[std::size_t(l)].assign(m.a(l), m.a(l) + sz);
    }
  }
};
}  // namespace

TEST(TrainVerify, AcceptsARealStep) {
  Checked c;
  const mlp::VerifyResult r = mlp::verify_step(c.view());
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_LT(r.worst, 1.0);
}

TEST(TrainVerify, CatchesEachKindOfCorruption) {
  {
    Checked c;
    c.z[2][17] += 0.01f;  // a sampled row? row 1 is not sampled; the probe catches it
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "Z";
  }
  {
    Checked c;
    c.a[1][5] = std::nanf("");
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "A";
  }
  {
    Checked c;
    c.dz[3][0] *= 1.5f;
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "dZ of the loss";
  }
  {
    Checked c;
    c.dz[1][0] += 1e-3f;  // row 0 is sampled
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "dZ of a hidden layer";
  }
  {
    Checked c;
    const mlp::Layout lay(c.cfg);
    c.grads[lay.w[1] + 7] += 1e-3f;
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "dW";
  }
  {
    Checked c;
    const mlp::Layout lay(c.cfg);
    c.grads[lay.b[0] + 2] += 1e-3f;
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "db";
  }
  {
    Checked c;
    c.p1[3] += 1e-4f;
    EXPECT_FALSE(mlp::verify_step(c.view()).ok) << "update";
  }
}

TEST(TrainVerify, NamesTheFirstBadValue) {
  const auto detail_of = [](Checked& c) {
    const mlp::VerifyResult r = mlp::verify_step(c.view());
    EXPECT_FALSE(r.ok);
    return r.detail;
  };
  {
    Checked c;
    c.z[2][3] += 0.01f;  // row 0, column 3: a sampled row, checked elementwise
    EXPECT_EQ(detail_of(c).rfind("layer 2 Z[0,3]: got ", 0), 0u) << detail_of(c);
  }
  {
    Checked c;
    c.a[1][5] = std::nanf("");
    EXPECT_EQ(detail_of(c).rfind("layer 1 A[0,5]: got nan", 0), 0u) << detail_of(c);
  }
  {
    Checked c;
    c.dz[1][0] += 1e-3f;  // layer 1's bias gradient, summed from this dZ, shows it first
    EXPECT_EQ(detail_of(c).rfind("layer 1 db[0]: got ", 0), 0u) << detail_of(c);
  }
  {
    Checked c;
    c.p1[3] += 1e-4f;
    EXPECT_EQ(detail_of(c).rfind("SGD update of param 3: got ", 0), 0u) << detail_of(c);
  }
}

TEST(TrainMemory, CapThrowsOutOfMemory) {
  mlp::HostAllocator a(1000);
  EXPECT_NO_THROW(a.floats(100));
  EXPECT_THROW(a.floats(1000), gtb::OutOfMemory);
  EXPECT_LE(a.bytes(), 1000u);
  const mlp::Config c = tiny(mlp::Act::relu, mlp::Optim::sgd);
  EXPECT_THROW(mlp::CpuMlp(c, 64, 4096), gtb::OutOfMemory);
}

TEST(TrainMemory, MicroBatchesFitWhereTheFullBatchDoesNot) {
  mlp::Config c = tiny(mlp::Act::relu, mlp::Optim::sgd);
  const int batch = 512;
  // Measure both footprints, then cap between them.
  const std::size_t small = mlp::CpuMlp(c, batch / 8).bytes(), big = mlp::CpuMlp(c, batch).bytes();
  ASSERT_LT(small, big);
  const std::size_t cap = (small + big) / 2;
  EXPECT_THROW(mlp::CpuMlp(c, batch, cap), gtb::OutOfMemory);
  mlp::CpuMlp m(c, batch / 8, cap);
  const mlp::Dataset d = mlp::make_clusters(batch, c.input, c.classes, 4);
  EXPECT_TRUE(std::isfinite(m.step(d.x.data(), d.y.data(), batch, 8)));
}

TEST(TrainCrossover, FromPoints) {
  using P = mlp::RatePoint;
  // GPU ahead from 256 on; the early win at 64 does not count because it falls back at 128.
  std::vector<P> pts = {{512, 10, 30}, {1, 10, 1}, {64, 10, 11}, {128, 10, 9}, {256, 10, 12}};
  ASSERT_TRUE(mlp::crossover(pts).has_value());
  EXPECT_EQ(*mlp::crossover(pts), 256);
  EXPECT_EQ(*mlp::last_gpu_loss(pts), 128);
  // Always ahead: the smallest x; never ahead at the end: none.
  EXPECT_EQ(*mlp::crossover({{1, 1, 2}, {2, 1, 3}}), 1);
  EXPECT_FALSE(mlp::last_gpu_loss({{1, 1, 2}, {2, 1, 3}}).has_value());
  EXPECT_FALSE(mlp::crossover({{1, 1, 2}, {2, 3, 2}}).has_value());
  // Equal is not ahead; points without both rates are ignored.
  EXPECT_EQ(*mlp::crossover({{1, 2, 2}, {2, 2, 3}, {4, 0, 5}}), 2);
  EXPECT_FALSE(mlp::crossover({}).has_value());
}

namespace {
gtb::Record rec(const char* workload, gtb::Backend be, gtb::json params, gtb::json options, double value) {
  return gtb::test::ok_record("train", workload, "", be, std::move(params), std::move(options), value);
}
}  // namespace

TEST(TrainCrossover, FindingsFromSyntheticRecords) {
  using gtb::Backend;
  std::vector<gtb::Record> recs;
  const double cpu[] = {100, 1000, 5000, 8000};
  const double dev[] = {10, 500, 9000, 50000};
  const double pin[] = {5, 300, 4000, 9000};
  const int batches[] = {1, 32, 512, 4096};
  for (int i = 0; i < 4; ++i) {
    gtb::json p = {{"batch", batches[i]}, {"width", 256}, {"depth", 4}};
    recs.push_back(rec("batch_sweep", Backend::cpu, p, gtb::json::object(), cpu[i]));
    recs.push_back(rec("batch_sweep", Backend::cpu, p, gtb::json::object(), cpu[i] / 2));  // best CPU counts
    recs.push_back(rec("batch_sweep", Backend::cuda, p, {{"data", "device"}}, dev[i]));
    recs.push_back(rec("batch_sweep", Backend::cuda, p, {{"data", "pinned"}}, pin[i]));
  }
  gtb::Record failed = rec("batch_sweep", Backend::cuda, {{"batch", 1}, {"width", 256}, {"depth", 4}}, {{"data", "pageable"}}, 1e9);
  failed.status = gtb::Status::skipped;  // skipped records never count
  recs.push_back(failed);
  // Model sweep, eager and graph.
  const double mcpu[] = {1000, 800, 100};
  const double meager[] = {200, 900, 5000};
  const int widths[] = {64, 256, 1024};
  for (int i = 0; i < 3; ++i) {
    gtb::json p = {{"batch", 256}, {"width", widths[i]}, {"depth", 4}};
    recs.push_back(rec("model_sweep", Backend::cpu, p, gtb::json::object(), mcpu[i]));
    recs.push_back(rec("model_sweep", Backend::cuda, p, {{"mode", "eager"}}, meager[i]));
    recs.push_back(rec("model_sweep", Backend::cuda, p, {{"mode", "graph"}}, meager[i] * 6));
  }
  // Precision.
  gtb::json pp = {{"batch", 1024}, {"width", 8192}, {"depth", 4}};
  gtb::Record fp32 = rec("precision", Backend::cuda, pp, {{"precision", "fp32"}}, 1000);
  fp32.counters["peak_device_bytes"] = {1000.0, "bytes"};
  fp32.counters["tflops"] = {40.0, "TFLOP/s"};
  gtb::Record fp16 = rec("precision", Backend::cuda, pp, {{"precision", "fp16"}}, 4000);
  fp16.counters["peak_device_bytes"] = {600.0, "bytes"};
  fp16.counters["tflops"] = {160.0, "TFLOP/s"};
  recs.push_back(fp32);
  recs.push_back(fp16);

  const mlp::Findings found = mlp::compute_findings(recs);
  gtb::json f = gtb::json::object();
  mlp::to_json(found, f);
  ASSERT_TRUE(f.contains("crossover_batch"));
  ASSERT_EQ(f["crossover_batch"].size(), 2u);
  for (const auto& e : f["crossover_batch"]) {
    if (e["options"]["data"] == "device")
      EXPECT_EQ(e["crossover_batch"].get<double>(), 512);
    else
      EXPECT_EQ(e["crossover_batch"].get<double>(), 4096);
  }
  ASSERT_TRUE(f.contains("gpu_slower_below"));
  for (const auto& e : f["gpu_slower_below"]) {
    if (e["options"]["mode"] == "eager") {
      EXPECT_EQ(e["gpu_slower_up_to_width"].get<double>(), 64);
      EXPECT_EQ(e["crossover_width"].get<double>(), 256);
    } else {
      EXPECT_TRUE(e["gpu_slower_up_to_width"].is_null());
    }
  }
  ASSERT_EQ(f["graph_speedup"].size(), 3u);
  EXPECT_DOUBLE_EQ(f["graph_speedup"][0]["speedup"].get<double>(), 6.0);
  ASSERT_EQ(f["mixed_precision"].size(), 1u);
  EXPECT_DOUBLE_EQ(f["mixed_precision"][0]["speedup_over_fp32"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(f["mixed_precision"][0]["memory_saved_fraction"].get<double>(), 0.4);
  ASSERT_EQ(f["largest_width_tflops"].size(), 2u);
}

// ---- the one float64 step check every step workload uses (kernels/train/step_check.h) ----
namespace {
struct ProbeCase {
  mlp::Config cfg = tiny(mlp::Act::relu, mlp::Optim::adam);
  int batch = 24;
  mlp::Dataset data = mlp::make_clusters(24, 12, 5, 9);
  mlp::StepCase step_case(int rows, int micro) const { return mlp::step_case(cfg, data, rows * micro, micro); }
};
}  // namespace

TEST(TrainStepCheck, AcceptsARealStepWithAndWithoutMicroBatches) {
  for (int micro : {1, 3}) {
    ProbeCase pc;
    const int rows = pc.batch / micro;
    mlp::CpuMlp m(pc.cfg, rows);
    for (int s = 0; s < 2; ++s) m.step(pc.data.x.data(), pc.data.y.data(), pc.batch, micro);  // t > 0: Adam's bias
    const std::vector<float> before(m.params(), m.params() + m.layout().total);
    const mlp::StepCheck c = mlp::check_step_f64(
        mlp::step_probe(m, [&] { return double(m.step(pc.data.x.data(), pc.data.y.data(), pc.batch, micro)); }, rows),
        pc.step_case(rows, micro));
    EXPECT_TRUE(c.ok) << "micro " << micro << ": " << c.detail;
    EXPECT_FALSE(c.skipped);
    EXPECT_TRUE(std::isfinite(c.loss));
    EXPECT_EQ(c.params_before, before);
    EXPECT_EQ(c.scale_before.step, 2);
    EXPECT_EQ(c.scale_after.step, 3);
  }
}

TEST(TrainStepCheck, FailsAWrongUpdateAndANonFiniteLoss) {
  ProbeCase pc;
  mlp::CpuMlp m(pc.cfg, pc.batch);
  auto real_step = [&] { return double(m.step(pc.data.x.data(), pc.data.y.data(), pc.batch)); };
  // A step whose update is off by a little in one parameter.
  mlp::StepProbe wrong = mlp::step_probe(m, [&] {
    const double loss = real_step();
    m.params()[3] += 1e-2f;
    return loss;
  }, pc.batch);
  EXPECT_FALSE(mlp::check_step_f64(wrong, pc.step_case(pc.batch, 1)).ok);
  // A correct step that reports a NaN loss.
  mlp::StepProbe nan_loss = mlp::step_probe(m, [&] {
    real_step();
    return std::nan("");
  }, pc.batch);
  const mlp::StepCheck c = mlp::check_step_f64(nan_loss, pc.step_case(pc.batch, 1));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.detail, "loss is not finite");
  // The same model with its real step passes (the failures above were the planted ones).
  EXPECT_TRUE(mlp::check_step_f64(mlp::step_probe(m, real_step, pc.batch), pc.step_case(pc.batch, 1)).ok);
}

TEST(TrainStepCheck, ASkippedStepIsRetriedAndOnlySkippedStepsFail) {
  ProbeCase pc;
  mlp::CpuMlp m(pc.cfg, pc.batch);
  // Planted loss scaling: the first `skips` steps are skipped (nothing moves, the skip count rises).
  int skips = 2, skipped = 0, steps = 0;
  mlp::StepProbe p = mlp::step_probe(m, [&] {
    ++steps;
    if (skipped < skips) {
      ++skipped;
      return 1.0;
    }
    return double(m.step(pc.data.x.data(), pc.data.y.data(), pc.batch));
  }, pc.batch);
  p.scale_state = [&] { return mlp::ScaleState{1.0f, 0, 0, skipped, m.steps_taken()}; };
  mlp::StepCase sc = pc.step_case(pc.batch, 1);
  sc.max_attempts = 5;
  const mlp::StepCheck ok = mlp::check_step_f64(p, sc);
  EXPECT_TRUE(ok.ok) << ok.detail;
  EXPECT_EQ(steps, 3) << "two skipped steps, then the applied one that is checked";
  skipped = 0, skips = 100, steps = 0;
  const mlp::StepCheck bad = mlp::check_step_f64(p, sc);
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(bad.skipped);
  EXPECT_EQ(steps, 5);
  EXPECT_NE(bad.detail.find("every one of 5 steps overflowed and was skipped"), std::string::npos) << bad.detail;
}

TEST(TrainStepCheck, RefusesAnIncompleteCaseOrProbe) {
  ProbeCase pc;
  mlp::CpuMlp m(pc.cfg, pc.batch);
  const mlp::StepProbe p = mlp::step_probe(m, [&] { return double(m.step(pc.data.x.data(), pc.data.y.data(), pc.batch)); }, pc.batch);
  mlp::StepCase no_cfg = pc.step_case(pc.batch, 1);
  no_cfg.cfg = nullptr;
  EXPECT_THROW(mlp::check_step_f64(p, no_cfg), std::invalid_argument);
  mlp::StepCase rows_over = pc.step_case(pc.batch, 1);
  rows_over.norm_rows = pc.batch - 1;
  EXPECT_THROW(mlp::check_step_f64(p, rows_over), std::invalid_argument);
  mlp::StepProbe no_step = p;
  no_step.step = nullptr;
  EXPECT_THROW(mlp::check_step_f64(no_step, pc.step_case(pc.batch, 1)), std::invalid_argument);
}

TEST(TrainStepCheck, StepCaseIsTheLastMicroBatchOfTheBatch) {
  ProbeCase pc;
  const mlp::StepCase c = mlp::step_case(pc.cfg, pc.data, 24, 3, 2e-2);
  EXPECT_EQ(c.rows, 8);
  EXPECT_EQ(c.norm_rows, 24);
  EXPECT_EQ(c.x, pc.data.x.data() + 16 * pc.cfg.input);
  EXPECT_EQ(c.labels, pc.data.y.data() + 16);
  EXPECT_FALSE(c.grads_single_micro);
  EXPECT_EQ(c.rtol, 2e-2);
  EXPECT_TRUE(mlp::step_case(pc.cfg, pc.data, 12).grads_single_micro);
  EXPECT_THROW(mlp::step_case(pc.cfg, pc.data, 24, 5), std::invalid_argument);   // 24 rows in 5 micro-batches
  EXPECT_THROW(mlp::step_case(pc.cfg, pc.data, 48, 1), std::invalid_argument);   // more rows than the data
  EXPECT_THROW(mlp::step_case(pc.cfg, pc.data, 0, 1), std::invalid_argument);
}

TEST(TrainConfig, BenchConfigIsTheFamiliesModel) {
  const mlp::Config sgd = mlp::bench_config(64);
  EXPECT_EQ(sgd.input, 64);
  EXPECT_EQ(sgd.width, 64);
  EXPECT_EQ(sgd.depth, 4);
  EXPECT_EQ(sgd.classes, 16);
  EXPECT_EQ(sgd.act, mlp::Act::relu);
  EXPECT_FLOAT_EQ(sgd.lr, 0.05f);
  const mlp::Config adam = mlp::bench_config(32, 2, mlp::Act::gelu, mlp::Optim::adam);
  EXPECT_EQ(adam.depth, 2);
  EXPECT_EQ(adam.act, mlp::Act::gelu);
  EXPECT_FLOAT_EQ(adam.lr, 1e-3f);
  EXPECT_THROW(mlp::bench_config(0), std::invalid_argument);
  EXPECT_THROW(mlp::bench_config(8, 0), std::invalid_argument);
}
