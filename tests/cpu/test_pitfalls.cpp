// The pitfalls family on the CPU: every build-flag variant against float64, the ISA dispatch, the
// step loops with each habit verified, bad input, and the findings from synthetic records.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/pitfalls/findings.h"
#include "kernels/common/verify.h"
#include "kernels/pitfalls/cpu/flag_kernels.h"
#include "kernels/pitfalls/cpu/step_loop.h"
#include "kernels/pitfalls/pitfalls.h"
#include "kernels/pitfalls/reference.h"
#include "tests/common/flag_variants.h"
#include "tests/common/small_configs.h"

namespace {

namespace pf = gtb::pitfalls;

// Runs one variant on one workload into poisoned outputs and returns the check.
pf::FlagCheck run_variant(const pf::HostKernels& k, const pf::FlagData& d) {
  std::vector<float> out(d.out_size()), out2(d.out2_size());
  gtb::poison(out.data(), out.size());
  gtb::poison(out2.data(), out2.size());
  pf::run_host_variant(k, d, out.data(), out2.data());
  return pf::check_flag_output(d, out.data(), out2.data());
}

TEST(PitfallsFlags, EveryHostVariantMatchesFloat64) {
  ASSERT_GE(pf::host_variants().size(), 3u);
  gtb::test::expect_variants_match_float64(pf::host_variants(), {std::size_t(1024), std::size_t(5 * 1024)}, run_variant,
                                           [](const pf::HostKernels&) { return 1e-5; });
}

TEST(PitfallsFlags, VariantsAreNamedAndCarryTheirFlags) {
  const char* names[] = {"O0", "O2", "O3"};
  for (const char* n : names) {
    const pf::HostKernels* k = pf::find_host_variant(n);
    ASSERT_NE(k, nullptr) << n;
    EXPECT_EQ(std::string(k->flags), std::string("-") + n);
  }
  EXPECT_EQ(pf::find_host_variant("O9"), nullptr);
  EXPECT_NE(pf::find_host_variant(pf::kHostBaseline), nullptr);
}

TEST(PitfallsFlags, IsaBuildOnlyWhereTheCpuRunsIt) {
  const pf::HostKernels* k = pf::find_host_variant("O3_isa");
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    ASSERT_NE(k, nullptr) << pf::host_isa_unavailable();
    const std::string isa = k->isa;
    EXPECT_TRUE(isa == "x86-64-v3" || isa == "x86-64-v4") << isa;
    if (isa == "x86-64-v4") {
      EXPECT_TRUE(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"));
    }
    EXPECT_NE(std::string(k->flags).find("-march=" + isa), std::string::npos) << k->flags;
    return;
  }
#endif
  EXPECT_EQ(k, nullptr);
  EXPECT_FALSE(pf::host_isa_unavailable().empty());
}

TEST(PitfallsFlags, CheckCatchesAWrongOrMissingElement) {
  const pf::FlagData d = pf::make_flag_data(pf::FlagWork::act, 1024);
  std::vector<float> a(d.ref.begin(), d.ref.end()), dz(d.ref2.begin(), d.ref2.end());
  EXPECT_TRUE(pf::check_flag_output(d, a.data(), dz.data()).ok);
  dz[700] += 1e-2f;
  EXPECT_FALSE(pf::check_flag_output(d, a.data(), dz.data()).ok);
  dz[700] = float(d.ref2[700]);
  gtb::poison(&a[3], 1);
  EXPECT_FALSE(pf::check_flag_output(d, a.data(), dz.data()).ok);
  EXPECT_FALSE(pf::check_flag_output(d, a.data(), nullptr).ok);
}

TEST(PitfallsFlags, BadSizesAndNamesAreRefused) {
  EXPECT_THROW(pf::make_flag_data(pf::FlagWork::chain, 0), std::invalid_argument);
  EXPECT_THROW(pf::make_flag_data(pf::FlagWork::chain, 1000), std::invalid_argument);
  EXPECT_THROW(pf::flag_work_from_string("gemm"), std::invalid_argument);
  EXPECT_EQ(pf::flag_work_from_string("xent"), pf::FlagWork::xent);
  EXPECT_THROW(pf::copy_from_string("twice"), std::invalid_argument);
  EXPECT_EQ(pf::copy_from_string("batch_pinned"), pf::Copy::batch_pinned);
  EXPECT_EQ(pf::sync_every_from_string("never"), 0);
  EXPECT_EQ(pf::sync_every_from_string("every_10"), 10);
  for (const char* bad : {"every_0", "every_", "every_x", "every_-1", "always", ""})
    EXPECT_THROW(pf::sync_every_from_string(bad), std::invalid_argument) << bad;
  EXPECT_EQ(pf::sync_variant(100), "every_100");
}

gtb::mlp::Config small_model() { return gtb::test::mlp_config(24, 24, 3, 5); }

TEST(PitfallsSteps, EveryHabitKeepsTheStepCorrect) {
  for (pf::Copy c : {pf::Copy::none, pf::Copy::batch, pf::Copy::activation, pf::Copy::weights}) {
    pf::CpuStepLoop loop(small_model(), 40, c, 1);
    const gtb::mlp::VerifyResult v = loop.verify_first_step();
    EXPECT_TRUE(v.ok) << pf::to_string(c) << ": " << v.detail;
    loop.run(3);
    EXPECT_TRUE(std::isfinite(loop.last_loss()));
  }
}

TEST(PitfallsSteps, LossIsReadEveryKSteps) {
  pf::CpuStepLoop every3(small_model(), 16, pf::Copy::none, 3), never(small_model(), 16, pf::Copy::none, 0);
  every3.run(10);
  never.run(10);
  EXPECT_EQ(every3.loss_reads(), 3);
  EXPECT_EQ(never.loss_reads(), 0);
}

TEST(PitfallsSteps, WeightsCopyRestartsFromTheHostWeights) {
  // The host copy overwrites the trained weights before every step: they stay one update away from
  // the initial weights, while the clean loop moves on.
  pf::CpuStepLoop copied(small_model(), 16, pf::Copy::weights, 0), clean(small_model(), 16, pf::Copy::none, 0);
  const std::size_t total = clean.model().layout().total;
  const std::vector<float> p0(clean.model().params(), clean.model().params() + total);
  copied.run(6);
  clean.run(6);
  double d_copied = 0, d_clean = 0;
  for (std::size_t i = 0; i < total; ++i) {
    d_copied += std::fabs(copied.model().params()[i] - p0[i]);
    d_clean += std::fabs(clean.model().params()[i] - p0[i]);
  }
  EXPECT_GT(d_copied, 0.0);
  EXPECT_LT(d_copied, 0.5 * d_clean);
}

TEST(PitfallsSteps, EveryAvailableLibraryKeepsEveryHabitCorrect) {
  // The loop runs the library the choice names; each one the machine offers must pass the check.
  int ran = 0;
  for (const gtb::cpu::GemmLib lib : {gtb::cpu::GemmLib::openblas, gtb::cpu::GemmLib::onednn, gtb::cpu::GemmLib::mkl}) {
    if (!gtb::cpu::gemm_lib_available(lib)) continue;
    ++ran;
    for (pf::Copy c : {pf::Copy::none, pf::Copy::weights}) {
      pf::CpuStepLoop loop(small_model(), 40, c, 1);
      loop.set_gemm_lib(lib);
      EXPECT_EQ(loop.model().gemm_lib(), lib);
      const gtb::mlp::VerifyResult v = loop.verify_first_step();
      EXPECT_TRUE(v.ok) << gtb::cpu::to_string(lib) << ", " << pf::to_string(c) << ": " << v.detail;
    }
  }
  EXPECT_GE(ran, 1);  // OpenBLAS is always built in
}

TEST(PitfallsSteps, TheFastestAvailableLibraryIsChosen) {
  using L = gtb::cpu::GemmLib;
  // The fastest wins, wherever it is in the list.
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, true, 3e-4}, {L::onednn, true, 2e-4}, {L::mkl, true, 2.5e-4}}), L::onednn);
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, true, 3e-4}, {L::onednn, true, 4e-4}, {L::mkl, true, 1e-4}}), L::mkl);
  // A challenger within 5 % of the best so far does not flip the choice; one 6 % faster does.
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, true, 1.00e-4}, {L::onednn, true, 0.97e-4}}), L::openblas);
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, true, 1.00e-4}, {L::onednn, true, 0.94e-4}}), L::onednn);
  // One that is not available is never chosen, however fast its (unread) time.
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, true, 3e-4}, {L::mkl, false, 1e-9}}), L::openblas);
  EXPECT_EQ(gtb::cpu::fastest_library({{L::openblas, false, 0}, {L::onednn, true, 5e-4}}), L::onednn);
  // None available, or a time that is not a time: refused with the reason.
  EXPECT_THROW(gtb::cpu::fastest_library({}), std::invalid_argument);
  EXPECT_THROW(gtb::cpu::fastest_library({{L::openblas, false, 1e-4}}), std::invalid_argument);
  EXPECT_THROW(gtb::cpu::fastest_library({{L::openblas, true, 0}}), std::invalid_argument);
  EXPECT_THROW(gtb::cpu::fastest_library({{L::openblas, true, std::nan("")}}), std::invalid_argument);
}

TEST(PitfallsSteps, BadArgumentsAreRefused) {
  EXPECT_THROW(pf::CpuStepLoop(small_model(), 0, pf::Copy::none, 0), std::invalid_argument);
  EXPECT_THROW(pf::CpuStepLoop(small_model(), 8, pf::Copy::none, -1), std::invalid_argument);
  EXPECT_THROW(pf::CpuStepLoop(small_model(), 8, pf::Copy::batch_pinned, 0), std::invalid_argument);
}

// ---- findings from synthetic records ----

gtb::Record rec(const std::string& workload, const std::string& variant, gtb::Backend be, gtb::json params,
                double value_us, double q1 = 0, double q3 = 0) {
  gtb::Record r;
  r.family = "pitfalls";
  r.workload = workload;
  r.variant = variant;
  r.backend = be;
  r.params = std::move(params);
  r.status = gtb::Status::ok;
  r.value = value_us;
  gtb::Stats s;
  s.median = value_us * 1e-6;
  s.q1 = (q1 > 0 ? q1 : value_us) * 1e-6;
  s.q3 = (q3 > 0 ? q3 : value_us) * 1e-6;
  r.stats = s;
  r.samples = {s.median, s.median};
  return r;
}

TEST(PitfallsFindings, StepCostAndWhereItStopsDominating) {
  using gtb::Backend;
  auto p = [](int w) { return gtb::json{{"width", w}, {"batch", 64}}; };
  std::vector<gtb::Record> recs = {
      rec("loss_read", "never", Backend::cuda, p(128), 20), rec("loss_read", "every_1", Backend::cuda, p(128), 50),
      rec("loss_read", "never", Backend::cuda, p(1024), 100), rec("loss_read", "every_1", Backend::cuda, p(1024), 130),
      rec("loss_read", "every_10", Backend::cuda, p(1024), 103),
      rec("copies", "weights", Backend::cuda, p(4096), 900),  // no clean record: no row
  };
  gtb::Record failed = rec("loss_read", "every_1", Backend::cuda, p(2048), 10);
  failed.status = gtb::Status::invalid;
  recs.push_back(failed);
  gtb::json f = gtb::json::object();
  const pf::Findings found = pf::compute_findings(recs);
  pf::to_json(found, f);
  ASSERT_TRUE(f.contains("steps"));
  ASSERT_EQ(f["steps"].size(), 3u);
  const gtb::json& small = f["steps"][0];
  EXPECT_DOUBLE_EQ(small["extra_us"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(small["pct_of_clean"].get<double>(), 150.0);
  EXPECT_TRUE(small["dominates"].get<bool>());
  EXPECT_DOUBLE_EQ(small["us_per_read"].get<double>(), 30.0);
  const gtb::json& every10 = f["steps"][2];
  EXPECT_DOUBLE_EQ(every10["us_per_read"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(every10["loss_reads_per_step"].get<double>(), 0.1);
  ASSERT_TRUE(f.contains("dominance"));
  bool seen = false;
  for (const auto& d : f["dominance"])
    if (d["variant"] == "every_1") {
      seen = true;
      EXPECT_EQ(d["dominates_up_to_width"], 128);
      EXPECT_EQ(d["stops_dominating_at_width"], 1024);
      EXPECT_TRUE(d["under_10pct_from_width"].is_null());  // 30% at the largest width
    } else if (d["variant"] == "every_10") {
      EXPECT_TRUE(d["dominates_up_to_width"].is_null());
      // Never dominated: no width it stops dominating at (not the smallest width measured).
      EXPECT_TRUE(d["stops_dominating_at_width"].is_null());
      EXPECT_EQ(d["under_10pct_from_width"], 1024);
    }
  EXPECT_TRUE(seen);
  EXPECT_FALSE(f.contains("builds"));
  // The typed result the sections read: the loss read of every step has its per-read cost, a copy none.
  ASSERT_EQ(found.steps.size(), 3u);
  EXPECT_TRUE(found.steps[0].us_per_read.has_value());
  EXPECT_TRUE(found.builds.empty());
}

// A file of several runs: a habit's cost is the median of the costs the runs measured, the habit's
// step and the clean one paired by run. A machine slow in run 1 for both steps and in run 2 for the
// copy's alone gives the runs' cost (a copy that costs the step again by the two medians); with one
// run, the medians' difference.
TEST(PitfallsFindings, AHabitsCostPairsTheRuns) {
  using gtb::Backend;
  const gtb::json p = {{"width", 256}, {"batch", 64}};
  gtb::Record clean = rec("copies", "none", Backend::cpu, p, 550), copy = rec("copies", "weights", Backend::cpu, p, 1200);
  auto runs = [](gtb::Record& r, std::vector<double> us) {
    for (std::size_t i = 0; i < us.size(); ++i) {
      gtb::RunStat x;
      x.run = int(i) + 1;
      x.stats = gtb::Stats{};
      x.stats->median = us[i] * 1e-6;
      r.runs.push_back(x);
    }
  };
  runs(clean, {1180, 550, 520});
  runs(copy, {1200, 1240, 530});  // each run's cost: 20, 690, 10 us
  pf::Findings found = pf::compute_findings({clean, copy});
  ASSERT_EQ(found.steps.size(), 1u);
  EXPECT_NEAR(found.steps[0].extra_us, 20.0, 1e-9);
  EXPECT_NEAR(found.steps[0].pct_of_clean, 100.0 * 20 / 550, 1e-9);
  EXPECT_FALSE(found.steps[0].dominates);
  EXPECT_DOUBLE_EQ(found.steps[0].clean_us, 550.0);  // the records' own figures stay
  EXPECT_DOUBLE_EQ(found.steps[0].step_us, 1200.0);
  EXPECT_EQ(found.steps[0].paired_runs, 3);
  copy.runs.clear();  // one run: the two medians' difference
  found = pf::compute_findings({clean, copy});
  EXPECT_NEAR(found.steps[0].extra_us, 650.0, 1e-9);
  EXPECT_TRUE(found.steps[0].dominates);
  EXPECT_EQ(found.steps[0].paired_runs, 0);
}

TEST(PitfallsFindings, BuildSlowdownAgainstTheDefaultBuild) {
  using gtb::Backend;
  const gtb::json n = {{"n", 1024}};
  std::vector<gtb::Record> recs = {rec("build_chain", "O3", Backend::cpu, n, 10, 9, 11),
                                   rec("build_chain", "O0", Backend::cpu, n, 80, 70, 90),
                                   rec("build_chain", "G", Backend::cuda, n, 50),
                                   rec("build_chain", "default", Backend::cuda, n, 5)};
  recs[1].counters["rel_norm_err"] = {2e-7, "1"};
  gtb::json f = gtb::json::object();
  const pf::Findings found = pf::compute_findings(recs);
  pf::to_json(found, f);
  ASSERT_TRUE(f.contains("builds"));
  ASSERT_EQ(f["builds"].size(), 4u);  // the baselines appear too, at 1x
  for (const auto& b : f["builds"]) {
    if (b["variant"] == "O0") {
      EXPECT_DOUBLE_EQ(b["slowdown"].get<double>(), 8.0);
      EXPECT_DOUBLE_EQ(b["slowdown_q1"].get<double>(), 70.0 / 11.0);
      EXPECT_DOUBLE_EQ(b["slowdown_q3"].get<double>(), 90.0 / 9.0);
      EXPECT_DOUBLE_EQ(b["rel_norm_err"].get<double>(), 2e-7);
    }
    if (b["variant"] == "G") {
      EXPECT_EQ(b["baseline"], "default");
      EXPECT_DOUBLE_EQ(b["slowdown"].get<double>(), 10.0);
    }
  }
}

}  // namespace
