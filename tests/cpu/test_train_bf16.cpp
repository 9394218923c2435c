// The CPU step in BF16 (autocast through the per-shape GEMM plan, on this and injected machines) against float64, its refusals, and the step check
// protocol every step workload shares (kernels/train/step_check.h), on a toy workload of its own.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/cpu/dnnl3.h"
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

TEST(TrainBf16, RefusesPrecisionsItCannotRun) {
  mlp::CpuMlp m(small_model(mlp::Optim::sgd), 8);
  EXPECT_EQ(m.precision(), Precision::fp32);
  for (Precision p : {Precision::tf32, Precision::fp16, Precision::bf16_fp32acc})
    EXPECT_THROW(m.set_precision(p), std::invalid_argument) << gtb::to_string(p);
  EXPECT_EQ(m.precision(), Precision::fp32);
  // BF16 takes its GEMMs from the plan, whatever the FP32 library is.
  m.set_precision(Precision::bf16);
  EXPECT_EQ(m.precision(), Precision::bf16);
  EXPECT_NO_THROW(m.set_gemm_lib(gtb::cpu::GemmLib::openblas));
  if (!gtb::cpu::mkl::available()) {
    try {
      m.set_gemm_lib(gtb::cpu::GemmLib::mkl);
      ADD_FAILURE() << "MKL accepted where it is not available";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(gtb::cpu::mkl::unavailable_reason()), std::string::npos) << e.what();
    }
  }
}

namespace {
namespace plan = gtb::cpu::plan;
// Machines the BF16 plan is chosen for: this one, and injected ones.
enum class Machine { here, no_native, native_only, onednn3_only, mkl_bf16_only, fp32_libs_only };
const char* name_of(Machine m) {
  switch (m) {
    case Machine::here: return "here";
    case Machine::no_native: return "no_native";
    case Machine::native_only: return "native_only";
    case Machine::onednn3_only: return "onednn3_only";
    case Machine::mkl_bf16_only: return "mkl_bf16_only";
    case Machine::fp32_libs_only: return "fp32_libs_only";
  }
  return "?";
}
// The injected facts, or why this machine cannot stand in for them (the test then skips).
std::string inject(mlp::CpuMlp& m, Machine which) {
  plan::Machine f = plan::this_machine();
  switch (which) {
    case Machine::here: break;
    case Machine::no_native:
      f.native_bf16_unavailable = "injected: a CPU without AVX512-BF16 or AMX";
      f.onednn3_bf16_unavailable = "injected: a CPU without AVX-512";
      break;
    case Machine::native_only:
      if (!f.native_bf16_unavailable.empty()) return f.native_bf16_unavailable;
      f.only = {"onednn_bf16"};
      break;
    case Machine::onednn3_only:
      if (!f.onednn3_bf16_unavailable.empty()) return f.onednn3_bf16_unavailable;
      f.only = {"onednn3_bf16"};
      break;
    case Machine::mkl_bf16_only:
      if (!f.mkl_unavailable.empty()) return f.mkl_unavailable;
      f.only = {"mkl_bf16"};
      break;
    case Machine::fp32_libs_only: f.only = {"openblas", "onednn", "mkl"}; break;
  }
  m.set_plan_machine(f);
  return "";
}
}  // namespace

std::string case_name(const ::testing::TestParamInfo<std::tuple<mlp::Optim, mlp::CpuMlp::Threading, Machine>>& info) {
  const char* modes[] = {"rows", "split", "blas"};
  return std::string(std::get<0>(info.param) == mlp::Optim::sgd ? "sgd_" : "adam_") +
         modes[int(std::get<1>(info.param))] + "_" + name_of(std::get<2>(info.param));
}

class TrainBf16Step
    : public ::testing::TestWithParam<std::tuple<mlp::Optim, mlp::CpuMlp::Threading, Machine>> {};

TEST_P(TrainBf16Step, PassesItsToleranceAndShowsItsRounding) {
  const auto [opt, mode, machine] = GetParam();
  const int batch = 256;  // rows mode at two threads
  const mlp::Dataset d = mlp::make_clusters(batch, 64, 10, 31);
  mlp::CpuMlp m(small_model(opt), batch);
  m.set_threading(mode);
  if (const std::string why = inject(m, machine); !why.empty()) GTEST_SKIP() << why;
  m.set_precision(Precision::bf16);
  const bool rows = m.rows_mode(batch);
  if ((machine == Machine::native_only || machine == Machine::onednn3_only) && rows) {
    // Rows mode offers no product to oneDNN's BF16 matmuls (each runs inside the step's parallel
    // region): with nothing else offered, no site has a library, and the plan says so.
    EXPECT_THROW(m.plan_gemms(batch), std::runtime_error);
    return;
  }
  const std::vector<float> init(m.params(), m.params() + m.layout().total);
  const mlp::StepCheck ok = checked_step(m, d, batch, 1e-2);
  EXPECT_TRUE(ok.ok) << ok.detail << "\n" << m.gemm_plan().summary();
  EXPECT_TRUE(std::isfinite(ok.loss));
  // Every site's choice was verified; the injected machine's facts decide what was offered.
  ASSERT_EQ(m.gemm_plan().choices().size(), std::size_t(3 * 3));
  for (const auto& c : m.gemm_plan().choices()) {
    const auto& chosen = c.tried[std::size_t(c.chosen)];
    EXPECT_TRUE(chosen.verified) << c.shape.site;
    EXPECT_EQ(c.shape.inner, rows) << c.shape.site;
    const auto native = std::find_if(c.tried.begin(), c.tried.end(), [](const auto& t) { return t.name == "onednn_bf16"; });
    ASSERT_NE(native, c.tried.end()) << c.shape.site;  // listed, with why when it could not run
    const auto v3 = std::find_if(c.tried.begin(), c.tried.end(), [](const auto& t) { return t.name == "onednn3_bf16"; });
    ASSERT_NE(v3, c.tried.end()) << c.shape.site;
    if (machine == Machine::no_native || rows) {
      EXPECT_FALSE(native->available) << c.shape.site;
      EXPECT_FALSE(native->detail.empty()) << c.shape.site;
      EXPECT_NE(chosen.name, "onednn_bf16") << c.shape.site;
      EXPECT_FALSE(v3->available) << c.shape.site;
      EXPECT_FALSE(v3->detail.empty()) << c.shape.site;
      EXPECT_NE(chosen.name, "onednn3_bf16") << c.shape.site;
    }
    if (machine == Machine::native_only) {
      EXPECT_EQ(chosen.name, "onednn_bf16") << c.shape.site;
    }
    if (machine == Machine::onednn3_only) {
      EXPECT_EQ(chosen.name, "onednn3_bf16") << c.shape.site;
    }
    if (machine == Machine::mkl_bf16_only) {
      EXPECT_EQ(chosen.name, "mkl_bf16") << c.shape.site;
    }
    if (machine == Machine::fp32_libs_only) {
      EXPECT_NE(chosen.name, "onednn_bf16") << c.shape.site;
      EXPECT_NE(chosen.name, "onednn3_bf16") << c.shape.site;
      EXPECT_NE(chosen.name, "mkl_bf16") << c.shape.site;
    }
    if (machine == Machine::here && !rows && plan::native_bf16_unavailable().empty()) {
      EXPECT_TRUE(native->verified) << c.shape.site << ": " << native->detail;  // the native path runs here
    }
    if (machine == Machine::here && !rows && gtb::cpu::dnnl3::native_bf16_unavailable().empty()) {
      EXPECT_TRUE(v3->verified) << c.shape.site << ": " << v3->detail;  // oneDNN 3 runs here
    }
  }
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
                                                              mlp::CpuMlp::Threading::blas),
                                            ::testing::Values(Machine::here, Machine::no_native, Machine::native_only, Machine::onednn3_only,
                                                              Machine::mkl_bf16_only, Machine::fp32_libs_only)),
                         case_name);

// The plan's candidates and choice on injected machines (no library runs).
TEST(GemmPlan, CandidatesFollowTheMachineAndThePickFollowsTheTimes) {
  auto find = [](const std::vector<plan::Candidate>& cs, const std::string& n) {
    return std::find_if(cs.begin(), cs.end(), [&](const plan::Candidate& c) { return c.name == n; });
  };
  const plan::Machine native{"", "", {}, "", "avx512_core_bf16"},
      none{"injected: no AVX512-BF16 or AMX", "injected: oneMKL did not load", {}, "injected: no oneDNN 3", "avx2"};
  const auto with = plan::candidates(true, native), without = plan::candidates(true, none);
  ASSERT_NE(find(with, "onednn_bf16"), with.end());
  EXPECT_TRUE(find(with, "onednn_bf16")->available);
  EXPECT_TRUE(find(with, "mkl_bf16")->available);
  EXPECT_FALSE(find(without, "onednn_bf16")->available);
  EXPECT_EQ(find(without, "onednn_bf16")->why_not, none.native_bf16_unavailable);
  EXPECT_FALSE(find(without, "mkl_bf16")->available);
  EXPECT_EQ(find(without, "mkl")->why_not, none.mkl_unavailable);
  EXPECT_TRUE(find(without, "openblas")->available);  // the rounded-operand path is always there
  const auto fp32 = plan::candidates(false, native);
  EXPECT_EQ(find(fp32, "onednn_bf16"), fp32.end());
  EXPECT_EQ(find(fp32, "mkl_bf16"), fp32.end());
  EXPECT_EQ(find(fp32, "onednn3_bf16"), fp32.end());
  EXPECT_TRUE(find(with, "onednn3_bf16")->available);
  EXPECT_FALSE(find(without, "onednn3_bf16")->available);
  EXPECT_EQ(find(without, "onednn3_bf16")->why_not, none.onednn3_bf16_unavailable);
  // The pick: the fastest verified, a challenger beating the first by 5 %.
  using T = plan::Choice::Tried;
  std::vector<T> tried = {{"openblas", true, true, 10e-3, ""}, {"mkl_bf16", true, true, 6e-3, ""},
                          {"onednn_bf16", true, true, 2e-3, ""}};
  EXPECT_EQ(plan::pick(tried), 2);  // a native BF16 machine: oneDNN's matmul wins
  tried[2] = {"onednn_bf16", false, false, 0, "injected: no AVX512-BF16 or AMX"};
  EXPECT_EQ(plan::pick(tried), 1);  // without it: oneMKL's BF16 GEMM
  tried[1].seconds = 9.7e-3;        // within 5 % of the first: the first stays
  EXPECT_EQ(plan::pick(tried), 0);
  tried[0].verified = false;        // a wrong result is never picked
  EXPECT_EQ(plan::pick(tried), 1);
  tried[1].verified = false;
  EXPECT_EQ(plan::pick(tried), -1);
}

// The BF16 choice on injected CPUs: what each library offers there (Machine) and times as such a CPU
// would give them (injected, not measured), through candidates() and pick() as choose() runs them.
TEST(GemmPlan, ChoosesAmongBothOneDnnsByTheCpu) {
  struct Cpu {
    const char* what;
    plan::Machine machine;
    std::vector<std::pair<std::string, double>> seconds;  // the injected time of each offered candidate
    std::string want;
  };
  const std::string ref26 = "injected: oneDNN 2.6 has only its reference BF16 matmul";
  const std::vector<Cpu> cpus = {
      // AMX: oneDNN 3's tile kernel far ahead of 2.6's AVX512-BF16 one and of the rest.
      {"AMX", {"", "", {}, "", "avx512_core_amx"},
       {{"openblas", 8e-3}, {"onednn", 8e-3}, {"mkl", 8e-3}, {"mkl_bf16", 3e-3}, {"onednn_bf16", 3e-3}, {"onednn3_bf16", 1e-3}},
       "onednn3_bf16"},
      // The same CPU without oneDNN 3 installed: its record says why, the older path runs.
      {"AMX, no oneDNN 3", {"", "", {}, "oneDNN 3 not found (run ci/setup.sh)", "avx512_core_amx"},
       {{"openblas", 8e-3}, {"onednn", 8e-3}, {"mkl", 8e-3}, {"mkl_bf16", 3.4e-3}, {"onednn_bf16", 3e-3}},
       "onednn_bf16"},
      // AVX512-BF16 without AMX: both oneDNNs native; 3 within 5 % of 2.6 leaves 2.6 chosen.
      {"AVX512-BF16", {"", "", {}, "", "avx512_core_bf16"},
       {{"openblas", 8e-3}, {"onednn", 8e-3}, {"mkl", 8e-3}, {"mkl_bf16", 4e-3}, {"onednn_bf16", 3e-3}, {"onednn3_bf16", 2.9e-3}},
       "onednn_bf16"},
      // AVX-512 without BF16 (an Ice Lake): 2.6 has only its reference code; 3 converts in registers.
      {"AVX-512", {ref26, "", {}, "", "avx512_core_vnni"},
       {{"openblas", 8e-3}, {"onednn", 8e-3}, {"mkl", 8e-3}, {"mkl_bf16", 9e-3}, {"onednn3_bf16", 6e-3}},
       "onednn3_bf16"},
      // AVX2 only: neither oneDNN has a BF16 matmul; an FP32 library on rounded operands.
      {"AVX2", {ref26, "", {}, "injected: oneDNN 3.2 has no BF16 matmul implementation for this CPU (ISA avx2)", "avx2"},
       {{"openblas", 8e-3}, {"onednn", 9e-3}, {"mkl", 7e-3}, {"mkl_bf16", 20e-3}},
       "mkl"},
  };
  for (const Cpu& cpu : cpus) {
    SCOPED_TRACE(cpu.what);
    std::vector<plan::Choice::Tried> tried;
    for (const plan::Candidate& c : plan::candidates(true, cpu.machine)) {
      const auto t = std::find_if(cpu.seconds.begin(), cpu.seconds.end(), [&](const auto& x) { return x.first == c.name; });
      // The machine decides oneMKL and the BF16 GEMMs; OpenBLAS and 2.6's SGEMM are facts of the build.
      const bool from_machine = c.name == "mkl" || c.name.find("bf16") != std::string::npos;
      if (from_machine) {
        EXPECT_EQ(c.available, t != cpu.seconds.end()) << c.name << ": " << c.why_not;
      }
      if (!c.available) {
        EXPECT_FALSE(c.why_not.empty()) << c.name;
      }
      const bool runs = c.available && t != cpu.seconds.end();
      tried.push_back({c.name, runs, runs, runs ? t->second : 0.0, c.why_not});
    }
    const int best = plan::pick(tried);
    ASSERT_GE(best, 0);
    EXPECT_EQ(tried[std::size_t(best)].name, cpu.want);
  }
}

TEST(TrainBf16, TrainsAsFp32Does) {
  const int batch = 128;
  const mlp::Dataset d = mlp::make_clusters(batch, 64, 10, 33);
  float last[2] = {0, 0}, first = 0;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    mlp::CpuMlp m(small_model(mlp::Optim::adam), batch);
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
    p.params_after = gtb::step::downloaded([this] { return w; });  // as a device backend: a copy the check owns
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
