// Tests of gtb compare: statistics, verdicts, record matching, machine checks, config and output.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/driver/common/compare_core.h"
#include "harness/driver/common/compare_stats.h"
#include "test_compare_util.h"

namespace gtb {
namespace {

using compare::Verdict;
using namespace testing;  // the synthetic records and documents of test_compare_util.h

TEST(CompareStats, MannWhitneyExactSmallSamples) {
  // Complete separation: P = 1 / C(6,3) for 3 vs 3, 1 / C(10,5) for 5 vs 5.
  EXPECT_NEAR(compare::mann_whitney_less({1, 2, 3}, {4, 5, 6}), 1.0 / 20, 1e-12);
  EXPECT_NEAR(compare::mann_whitney_less({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 1.0 / 252, 1e-12);
  EXPECT_NEAR(compare::mann_whitney_less({4, 5, 6}, {1, 2, 3}), 1.0, 1e-12);
  // One swapped pair: U = 8 of 9, P(U >= 8) = 2 / 20.
  EXPECT_NEAR(compare::mann_whitney_less({1, 2, 4}, {3, 5, 6}), 2.0 / 20, 1e-12);
  EXPECT_EQ(compare::mann_whitney_less({}, {1.0}), 1.0);
}

TEST(CompareStats, MannWhitneyNormalApproximationAgreesWithExact) {
  compare::Rng rng(7);
  auto x = lognormal(rng, 40, 1.0, 0.1), y = lognormal(rng, 40, 1.03, 0.1);
  const double exact = compare::mann_whitney_less(x, y);
  x.push_back(x[0]);  // a tie forces the normal approximation
  y.push_back(x[0]);
  const double approx = compare::mann_whitney_less(x, y);
  EXPECT_NEAR(exact, approx, 0.03);
}

TEST(CompareStats, BootstrapIsDeterministicAndBracketsTheRatio) {
  compare::Rng rng(1);
  const auto a = lognormal(rng, 30, 1.0, 0.05), b = lognormal(rng, 30, 1.2, 0.05);
  const auto r1 = compare::bootstrap_median_ratio(b, a, 0.99, 1000, 42);
  const auto r2 = compare::bootstrap_median_ratio(b, a, 0.99, 1000, 42);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.high, r2.high);
  EXPECT_LE(r1.low, r1.ratio);
  EXPECT_GE(r1.high, r1.ratio);
  EXPECT_GT(r1.low, 1.1);
  EXPECT_LT(r1.high, 1.3);
  const auto same = compare::bootstrap_median_ratio(a, a, 0.99, 1000, 3);
  EXPECT_LT(same.low, 1.0);
  EXPECT_GT(same.high, 1.0);
}

struct DecideCase {
  double time_factor;  // NEW time / BASE time
  double sigma;
  std::size_t n;
  Verdict expected;
};

class DecideTest : public ::testing::TestWithParam<DecideCase> {};

TEST_P(DecideTest, RateMetric) {
  const DecideCase c = GetParam();
  compare::Rng rng(11);
  const auto bt = lognormal(rng, c.n, 1e-3, c.sigma), nt = lognormal(rng, c.n, 1e-3 * c.time_factor, c.sigma);
  // Rate metric: values are work / seconds, higher is better.
  std::vector<double> bv, nv;
  for (double t : bt) bv.push_back(1.0 / t);
  for (double t : nt) nv.push_back(1.0 / t);
  const double bmed = 1.0 / median(bt), nmed = 1.0 / median(nt);
  const auto d = compare::decide(bmed, nmed, bv, nv, Better::higher, 0.05, compare::Settings{}, 5);
  EXPECT_EQ(compare::to_string(d.verdict), std::string(compare::to_string(c.expected))) << d.note;
  // The same numbers as a time metric (lower is better) must give the same verdict.
  const auto dt = compare::decide(median(bt), median(nt), bt, nt, Better::lower, 0.05, compare::Settings{}, 5);
  EXPECT_EQ(compare::to_string(dt.verdict), std::string(compare::to_string(c.expected))) << dt.note;
  EXPECT_NEAR(d.ratio, dt.ratio, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Verdicts, DecideTest,
                         ::testing::Values(DecideCase{1.0, 0.01, 20, Verdict::same},
                                           DecideCase{1.02, 0.01, 20, Verdict::same},    // real but under threshold
                                           DecideCase{1.25, 0.02, 20, Verdict::slower},
                                           DecideCase{0.75, 0.02, 20, Verdict::faster},
                                           DecideCase{1.25, 0.02, 3, Verdict::noisy},    // too few samples
                                           DecideCase{1.0, 0.40, 20, Verdict::noisy}));  // wide interval

TEST(Decide, BeyondThresholdWithoutEvidenceIsNoisy) {
  // A 10% median shift where the samples overlap heavily: effect without evidence.
  const std::vector<double> base = {1.0, 1.5, 0.7, 1.2, 0.9, 1.4, 0.6, 1.1};
  std::vector<double> next;
  for (double x : base) next.push_back(x * 0.9);
  std::rotate(next.begin(), next.begin() + 3, next.end());
  const auto d = compare::decide(1.05, 0.945, base, next, Better::higher, 0.05, compare::Settings{}, 1);
  EXPECT_EQ(d.verdict, Verdict::noisy) << d.note;
  EXPECT_NE(d.note.find("do not show it"), std::string::npos);
}

TEST(Decide, IdenticalSamplesAreTheSame) {
  // A file compared with itself: wide samples (this exact set reads "noisy" against a shifted copy of
  // itself) must still give "same", never "noisy".
  compare::Rng rng(3);
  const auto wide = lognormal(rng, 12, 1e-3, 0.40);
  const auto d = compare::decide(median(wide), median(wide), wide, wide, Better::lower, 0.05, compare::Settings{}, 1);
  EXPECT_EQ(d.verdict, Verdict::same) << d.note;
  EXPECT_DOUBLE_EQ(d.ratio, 1.0);
  EXPECT_EQ(d.note, "identical samples");
  // One sample different is not identical: the ordinary rule decides.
  auto other = wide;
  other.back() *= 1.5;
  const auto e = compare::decide(median(wide), median(other), wide, other, Better::lower, 0.05, compare::Settings{}, 1);
  EXPECT_NE(e.note, "identical samples");
}

TEST(Decide, NonPositiveValueIsUnmeasured) {
  const auto d = compare::decide(0.0, 1.0, {}, {}, Better::higher, 0.05, compare::Settings{}, 1);
  EXPECT_EQ(d.verdict, Verdict::unmeasured);
}

// ------------------------------------------------------------------------------ documents

std::vector<double> steady(double median_s, std::uint64_t seed, std::size_t n = 20) {
  compare::Rng rng(seed);
  return lognormal(rng, n, median_s, 0.01);
}

const compare::Row* find_row(const compare::Result& r, const std::string& workload) {
  for (const auto& row : r.rows)
    if (row.workload == workload) return &row;
  return nullptr;
}

TEST(CompareDocuments, MatchesTypedParamsInAnyKeyOrder) {
  const Record b = rate_record("w", json{{"m", 1}, {"n", 2}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"n", 2}, {"m", 1}}, steady(1e-3, 2));
  const auto res = compare::compare_documents(doc_of({b}), doc_of({n}), compare::Config{});
  ASSERT_EQ(res.rows.size(), 1u);
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::same);
  EXPECT_EQ(res.exit_code(), 0);
}

TEST(CompareDocuments, IntegerAndFloatParamsAreDifferentProblems) {
  const Record b = rate_record("w", json{{"scale", 1}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"scale", 1.0}}, steady(1e-3, 2));
  const auto res = compare::compare_documents(doc_of({b}), doc_of({n}), compare::Config{});
  EXPECT_EQ(res.count(Verdict::missing), 1u);
  EXPECT_EQ(res.count(Verdict::added), 1u);
  EXPECT_EQ(res.exit_code(), 0);  // a missing record is reported, not a regression
}

// The within-run rule at the plain threshold: one-run files with the generous single-run threshold
// set down to the default, so that the sample-level rule itself is what these tests exercise.
compare::Config samples_rule() {
  compare::Config c;
  c.settings.single_run_threshold = c.settings.threshold;
  return c;
}

TEST(CompareDocuments, OneRunEachSideCountsOnlyBeyondTheGenerousThreshold) {
  // 13% slower with overwhelming within-run evidence: weak evidence all the same (a second run on a
  // shared machine can differ that much), so not a regression at the defaults.
  const Record b = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"b", 1}}, steady(1.15e-3, 2));
  const auto res = compare::compare_documents(doc_of({b}), doc_of({n}), compare::Config{});
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::same);
  EXPECT_NE(res.rows[0].d.note.find("weak evidence"), std::string::npos);
  EXPECT_EQ(res.exit_code(), 0);
  // Beyond the single-run threshold (25%) it is one.
  const Record worse = rate_record("w", json{{"b", 1}}, steady(1.5e-3, 3));
  EXPECT_EQ(compare::compare_documents(doc_of({b}), doc_of({worse}), compare::Config{}).rows[0].d.verdict,
            Verdict::slower);
}

TEST(CompareDocuments, SlowerOnABusyMachineIsUnconfirmedNeverAPass) {
  const Record b = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"b", 1}}, steady(1.5e-3, 2));
  json base = doc_of({b}), next = doc_of({n});
  base["families"] = json::array({{{"name", "transfer"}, {"health", {{"busy", false}, {"warnings", json::array()}}}}});
  next["families"] = json::array(
      {{{"name", "transfer"}, {"health", {{"busy", true}, {"warnings", {"other processes used 55% of the CPUs"}}}}}});
  auto res = compare::compare_documents(base, next, compare::Config{});
  ASSERT_EQ(res.rows[0].d.verdict, Verdict::slower);
  compare::mark_unconfirmed_on_busy(res, base, next);
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::unconfirmed);
  EXPECT_NE(res.rows[0].d.note.find("NEW: other processes used 55% of the CPUs"), std::string::npos) << res.rows[0].d.note;
  EXPECT_EQ(res.exit_code(), compare::kExitUnconfirmed);
  EXPECT_EQ(res.regressions(), 0u);
  // Both files idle: the same slowdown is a regression.
  next["families"][0]["health"]["busy"] = false;
  auto idle = compare::compare_documents(base, next, compare::Config{});
  compare::mark_unconfirmed_on_busy(idle, base, next);
  EXPECT_EQ(idle.rows[0].d.verdict, Verdict::slower);
  EXPECT_EQ(idle.exit_code(), 1);
}

// A family whose speed readings changed while it ran (the host's other work on a shared or virtual
// machine) cannot tell a regression from a slower moment either: unconfirmed, also in a file written
// before gtb judged the readings (busy false, readings kept).
TEST(CompareDocuments, SlowerWhileTheMachinesSpeedChangedIsUnconfirmed) {
  const Record b = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"b", 1}}, steady(1.5e-3, 2));
  auto reading = [](double all, double cache) {
    return json{{"threads", 2}, {"one_core_gmadd_per_s", 12}, {"all_cores_gmadd_per_s", all},
                {"cache_sweep_bytes", 629145.6}, {"cache_scaling", cache}};
  };
  json base = doc_of({b}), next = doc_of({n});
  base["families"] = json::array({{{"name", "transfer"}, {"health", {{"busy", false}, {"warnings", json::array()},
                                                                     {"speed", {{"before", reading(24, 0.97)}, {"after", reading(24, 0.95)}}}}}}});
  next["families"] = base["families"];
  auto steady_res = compare::compare_documents(base, next, compare::Config{});
  compare::mark_unconfirmed_on_busy(steady_res, base, next);
  ASSERT_EQ(steady_res.rows[0].d.verdict, Verdict::slower) << "steady readings: a regression";
  next["families"][0]["health"]["speed"]["after"] = reading(13, 0.5);
  auto res = compare::compare_documents(base, next, compare::Config{});
  compare::mark_unconfirmed_on_busy(res, base, next);
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::unconfirmed);
  EXPECT_NE(res.rows[0].d.note.find("NEW: the machine's speed changed while it ran: all cores 24 -> "
                                    "13 G multiply-adds/s, the CPUs' cache reading 0.97 -> 0.50"),
            std::string::npos)
      << res.rows[0].d.note;
  EXPECT_EQ(res.exit_code(), compare::kExitUnconfirmed);
}

TEST(CompareDocuments, RegressionImprovementMissingNewAndBroken) {
  std::vector<Record> base = {rate_record("slow", json{{"b", 1}}, steady(1e-3, 1)),
                              rate_record("fast", json{{"b", 1}}, steady(1e-3, 2)),
                              rate_record("gone", json{{"b", 1}}, steady(1e-3, 3)),
                              rate_record("breaks", json{{"b", 1}}, steady(1e-3, 4))};
  std::vector<Record> next = {rate_record("slow", json{{"b", 1}}, steady(1.3e-3, 5)),
                              rate_record("fast", json{{"b", 1}}, steady(0.7e-3, 6)),
                              rate_record("added", json{{"b", 1}}, steady(1e-3, 7)),
                              rate_record("breaks", json{{"b", 1}}, steady(1e-3, 8))};
  Record& broken = next[3];
  broken.status = Status::invalid;
  broken.status_detail = "element 3 differs";
  broken.value.reset();
  broken.stats.reset();
  broken.samples.clear();
  const auto res = compare::compare_documents(doc_of(base), doc_of(next), samples_rule());
  EXPECT_EQ(find_row(res, "slow")->d.verdict, Verdict::slower);
  EXPECT_NEAR(find_row(res, "slow")->d.ratio, 1.0 / 1.3, 0.02);
  EXPECT_EQ(find_row(res, "fast")->d.verdict, Verdict::faster);
  EXPECT_EQ(find_row(res, "gone")->d.verdict, Verdict::missing);
  EXPECT_EQ(find_row(res, "added")->d.verdict, Verdict::added);
  EXPECT_EQ(find_row(res, "breaks")->d.verdict, Verdict::broken);
  EXPECT_NE(find_row(res, "breaks")->d.note.find("invalid in NEW"), std::string::npos);
  EXPECT_EQ(res.regressions(), 2u);
  EXPECT_EQ(res.exit_code(), 1);
  // Regressions are listed first.
  EXPECT_TRUE(compare::is_regression(res.rows[0].d.verdict));
  EXPECT_TRUE(compare::is_regression(res.rows[1].d.verdict));
}

TEST(CompareDocuments, ImprovementsNeverFail) {
  const auto res = compare::compare_documents(doc_of({rate_record("w", json{{"b", 1}}, steady(1e-3, 1))}),
                                              doc_of({rate_record("w", json{{"b", 1}}, steady(0.5e-3, 2))}),
                                              compare::Config{});
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::faster);
  EXPECT_EQ(res.exit_code(), 0);
}

TEST(CompareDocuments, SkippedInNewIsUnmeasuredNotARegression) {
  Record n = rate_record("w", json{{"b", 1}}, steady(1e-3, 2));
  n.status = Status::skipped;
  n.status_detail = "out of memory: 4 GiB";
  n.value.reset();
  n.samples.clear();
  n.stats.reset();
  const auto res = compare::compare_documents(doc_of({rate_record("w", json{{"b", 1}}, steady(1e-3, 1))}),
                                              doc_of({n}), compare::Config{});
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::unmeasured);
  EXPECT_NE(res.rows[0].d.note.find("out of memory"), std::string::npos);
  EXPECT_EQ(res.exit_code(), 0);
}

TEST(CompareDocuments, DuplicateRecordsAreBadInput) {
  const Record r = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  EXPECT_THROW(compare::compare_documents(doc_of({r, r}), doc_of({r}), compare::Config{}), std::runtime_error);
}

TEST(CompareContexts, GpuModelsAndCpuModels) {
  using testing::context_json;
  EXPECT_TRUE(compare::check_contexts(context_json("H200"), context_json("H200")).comparable);
  EXPECT_FALSE(compare::check_contexts(context_json("H200"), context_json("A100")).comparable);
  const auto gpu_vs_none = compare::check_contexts(context_json("H200"), context_json(""));
  EXPECT_FALSE(gpu_vs_none.comparable);
  EXPECT_NE(gpu_vs_none.problems[0].find("has none"), std::string::npos);
  EXPECT_TRUE(compare::check_contexts(context_json(""), context_json("")).comparable);
  EXPECT_FALSE(compare::check_contexts(context_json("", "CPU A"), context_json("", "CPU B")).comparable);
  EXPECT_FALSE(compare::check_contexts(context_json("H200", "CPU A"), context_json("H200", "CPU B")).comparable);
}

TEST(CompareDocuments, DifferentMachinesExitTwoUnlessAllowed) {
  const Record r = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  auto res = compare::compare_documents(doc_of({r}, "H200"), doc_of({r}, "A100"), compare::Config{});
  EXPECT_EQ(res.exit_code(), 2);
  res.machines_allowed = true;
  EXPECT_EQ(res.exit_code(), 0);
}

TEST(CompareConfig, ThresholdsPerFamilyAndGlob) {
  const json j = json::parse(R"({"threshold": 0.1, "families": {"gemm": 0.2, "train": {"ignore": true}},
                                 "records": {"gemm/*/cuda/*": {"threshold": 0.3}, "transfer/loader/*": {"ignore": true}}})");
  const auto c = compare::Config::from_json(j);
  Record r = rate_record("gemm", json{{"m", 1}}, steady(1e-3, 1), "gemm");
  EXPECT_DOUBLE_EQ(c.threshold_for(r), 0.3);
  r = rate_record("gemm", json{{"m", 1}}, steady(1e-3, 1), "gemm", Backend::cpu);
  EXPECT_DOUBLE_EQ(c.threshold_for(r), 0.2);
  r = rate_record("copy", json{{"b", 1}}, steady(1e-3, 1), "transfer");
  EXPECT_DOUBLE_EQ(c.threshold_for(r), 0.1);
  EXPECT_FALSE(c.ignored(r));
  EXPECT_TRUE(c.ignored(rate_record("loader", json{{"b", 1}}, steady(1e-3, 1), "transfer")));
  EXPECT_TRUE(c.ignored(rate_record("step", json{{"b", 1}}, steady(1e-3, 1), "train")));
}

TEST(CompareConfig, WithinRunFloorIsASetting) {
  EXPECT_DOUBLE_EQ(compare::Config{}.settings.within_run_floor, 0.5);
  EXPECT_DOUBLE_EQ(compare::Config::from_json(json::parse(R"({"within_run_floor": 0})")).settings.within_run_floor, 0.0);
}

TEST(CompareConfig, ThresholdChangesTheVerdict) {
  // 8% slower: a regression at 5%, the same at a 10% family threshold.
  const Record b = rate_record("w", json{{"b", 1}}, steady(1e-3, 1));
  const Record n = rate_record("w", json{{"b", 1}}, steady(1.087e-3, 2));
  EXPECT_EQ(compare::compare_documents(doc_of({b}), doc_of({n}), samples_rule()).rows[0].d.verdict, Verdict::slower);
  auto c = compare::Config::from_json(json::parse(R"({"families": {"transfer": 0.10}})"));
  c.settings.single_run_threshold = c.settings.threshold;
  EXPECT_EQ(compare::compare_documents(doc_of({b}), doc_of({n}), c).rows[0].d.verdict, Verdict::same);
}

TEST(CompareConfig, RejectsMistakes) {
  for (const char* bad : {R"({"treshold": 0.1})", R"({"threshold": 5})", R"({"threshold": "5%"})",
                          R"({"families": {"gemm": {"threshld": 0.1}}})", R"({"records": []})",
                          R"({"min_samples": 1})", R"({"alpha": 0})", R"({"within_run_floor": -1})",
                          R"({"within_run_floor": "half"})", R"([1, 2])"}) {
    EXPECT_THROW(compare::Config::from_json(json::parse(bad)), std::runtime_error) << bad;
  }
}

TEST(CompareRender, AllFormatsCarryTheVerdicts) {
  const auto res = compare::compare_documents(doc_of({rate_record("w", json{{"b", 1}}, steady(1e-3, 1))}),
                                              doc_of({rate_record("w", json{{"b", 1}}, steady(1.5e-3, 2))}),
                                              compare::Config{});
  const std::string text = compare::render_text(res);
  EXPECT_NE(text.find("slower"), std::string::npos);
  EXPECT_NE(text.find("REGRESSION"), std::string::npos);
  const std::string md = compare::render_markdown(res);
  EXPECT_NE(md.find("| **slower** |"), std::string::npos);
  EXPECT_NE(md.find("<details>"), std::string::npos);
  const json j = compare::render_json(res);
  EXPECT_EQ(j["schema"], "gtb-compare");
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["records"][0]["verdict"], "slower");
  EXPECT_TRUE(j["records"][0]["regression"].get<bool>());
  EXPECT_TRUE(all_numbers_finite(j));
}

}  // namespace
}  // namespace gtb
