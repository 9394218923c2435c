// Tests of run-level decisions: Student's t, repeated runs merged, --runs baselines and paired rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "harness/driver/common/compare_core.h"
#include "harness/driver/common/compare_stats.h"
#include "harness/document/stats.h"
#include "harness/driver/common/runs.h"
#include "test_compare_util.h"

namespace gtb {
namespace {

using compare::Verdict;
using namespace testing;  // the synthetic records and documents of test_compare_util.h

TEST(StudentT, KnownValues) {
  EXPECT_DOUBLE_EQ(compare::student_t_cdf(0.0, 3), 0.5);
  // df = 2 has the closed form 1/2 + t / (2 sqrt(t^2 + 2)).
  EXPECT_NEAR(compare::student_t_cdf(2.0, 2), 0.5 + 2.0 / (2.0 * std::sqrt(6.0)), 1e-12);
  EXPECT_NEAR(compare::student_t_cdf(-1.0, 1), 0.25, 1e-12);  // Cauchy
  // Tables: t(0.995; 4) = 4.604, t(0.975; 1) = 12.706, t(0.995; 30) = 2.750, t(0.95; 7) = 1.895.
  EXPECT_NEAR(compare::student_t_quantile(0.995, 4), 4.604, 1e-3);
  EXPECT_NEAR(compare::student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(compare::student_t_quantile(0.995, 30), 2.750, 1e-3);
  EXPECT_NEAR(compare::student_t_quantile(0.95, 7), 1.895, 1e-3);
  EXPECT_NEAR(compare::student_t_quantile(0.005, 4), -4.604, 1e-3);
  EXPECT_TRUE(std::isnan(compare::student_t_quantile(1.0, 4)));
  EXPECT_TRUE(std::isnan(compare::student_t_cdf(1.0, 0)));
}

// Per-run values of a rate metric: a true value, a drift per run (the run-to-run spread).
std::vector<double> runs_of(compare::Rng& rng, int k, double value, double spread) {
  std::vector<double> v(static_cast<std::size_t>(k));
  for (auto& x : v) x = value * std::exp(spread * rng.normal());
  return v;
}

TEST(DecideRuns, AAFalseAlarmsStayBelowOnePercent) {
  compare::Rng rng(21);
  int flagged = 0, trials = 0;
  for (double spread : {0.005, 0.02, 0.05, 0.15})
    for (int i = 0; i < 1000; ++i, ++trials) {
      const auto d = compare::decide_runs(runs_of(rng, 3, 100, spread), runs_of(rng, 3, 100, spread), false,
                                          Better::higher, 0.05, compare::Settings{});
      flagged += d.verdict == Verdict::slower;
    }
  EXPECT_LT(flagged, trials / 100) << flagged << " of " << trials;
}

TEST(DecideRuns, PlantedTenPercentOnALowSpreadRecordIsCaught) {
  compare::Rng rng(22);
  for (double spread : {0.005, 0.01, 0.02}) {
    int caught = 0;
    for (int i = 0; i < 500; ++i) {
      const auto d = compare::decide_runs(runs_of(rng, 3, 100, spread), runs_of(rng, 3, 100 / 1.1, spread), false,
                                          Better::higher, 0.05, compare::Settings{});
      caught += d.verdict == Verdict::slower;
    }
    EXPECT_GE(caught, 400) << "spread " << spread;  // >= 80% with --runs 3
  }
}

TEST(DecideRuns, AChangeWithinTheNoiseFloorIsNeverARegression) {
  // BASE's runs spread +-10%: a 12% drop of NEW's mean is within that floor.
  const std::vector<double> base = {100, 90, 110}, next = {88, 89, 87};
  const auto d = compare::decide_runs(base, next, false, Better::higher, 0.05, compare::Settings{});
  EXPECT_NE(d.verdict, Verdict::slower);
  EXPECT_LT(d.ratio, 0.9);
  EXPECT_GT(d.ci_high, 1.0);
  // The same drop from a steady baseline is one.
  const auto steady = compare::decide_runs({100, 100.5, 99.5}, next, false, Better::higher, 0.05, compare::Settings{});
  EXPECT_EQ(steady.verdict, Verdict::slower);
  // Time metrics point the other way: the same numbers as seconds are an improvement.
  EXPECT_EQ(compare::decide_runs({100, 100.5, 99.5}, next, false, Better::lower, 0.05, compare::Settings{}).verdict,
            Verdict::faster);
}

TEST(DecideRuns, SamplesSpreadInsideRunsWidenTheFloor) {
  // Three steady runs a side 16% apart, as two files of a record whose samples visit two machine
  // states (24 and 32 ms) and whose three medians each landed in one state: measured on the 2-core
  // machine, a false alarm when only the runs' own spread counts.
  const std::vector<double> base = {0.067, 0.067, 0.066}, next = {0.056, 0.057, 0.056};
  EXPECT_EQ(compare::decide_runs(base, next, false, Better::higher, 0.05, compare::Settings{}).verdict, Verdict::slower);
  const auto wide = compare::decide_runs(base, next, false, Better::higher, 0.05, compare::Settings{}, 0.2);
  EXPECT_NE(wide.verdict, Verdict::slower);
  EXPECT_NE(wide.note.find("spread inside runs (20.0%)"), std::string::npos) << wide.note;
  // A steady record (1% inside its runs) still shows a 10% slowdown.
  const auto steady = compare::decide_runs({100, 100.5, 99.5}, {91, 90.5, 91.5}, false, Better::higher, 0.05,
                                           compare::Settings{}, 0.01);
  EXPECT_EQ(steady.verdict, Verdict::slower);
  // The factor is a setting; 0 turns the floor off.
  compare::Settings off;
  off.within_run_floor = 0;
  EXPECT_EQ(compare::decide_runs(base, next, false, Better::higher, 0.05, off, 0.2).verdict, Verdict::slower);
}

TEST(DecideRuns, SamplesSpreadInsideRunsWidenPairedRounds) {
  // Five rounds of one build against itself, measured under a concurrent compile on the 2-core
  // machine (host triad, GB/s): BASE happened to be faster in every round, by 2-17%, while the
  // samples inside each run spread about 10% (ln(q3/q1)/1.349). Without the floor: a false alarm.
  const std::vector<double> base = {19.4, 18.0, 19.5, 19.7, 20.1}, next = {17.2, 17.6, 16.8, 18.5, 16.9};
  compare::Settings off;
  off.within_run_floor = 0;
  EXPECT_EQ(compare::decide_runs(base, next, true, Better::higher, 0.05, off, 0.097).verdict, Verdict::slower);
  const auto floored = compare::decide_runs(base, next, true, Better::higher, 0.05, compare::Settings{}, 0.097);
  EXPECT_EQ(floored.verdict, Verdict::noisy);
  EXPECT_NE(floored.note.find("spread inside runs (9.7%)"), std::string::npos) << floored.note;
  // A record steady inside its runs (1%) still shows a 10% slowdown in five rounds.
  const auto steady = compare::decide_runs({100, 101, 99, 100.5, 99.5}, {91, 90.5, 90, 91.5, 90.8}, true,
                                           Better::higher, 0.05, compare::Settings{}, 0.01);
  EXPECT_EQ(steady.verdict, Verdict::slower);
  EXPECT_EQ(steady.note.find("spread inside runs"), std::string::npos) << steady.note;
}

TEST(Confirmation, OnlyASecondSlowerVerdictStaysARegression) {
  auto row = [](const std::string& id, Verdict v, double ratio) {
    compare::Row r;
    r.id = id;
    r.evidence = "paired rounds";
    r.base_runs = r.new_runs = 5;
    r.has_ratio = true;
    r.d.verdict = v;
    r.d.tested = true;
    r.d.ratio = ratio, r.d.ci_low = ratio - 0.05, r.d.ci_high = ratio + 0.05;
    return r;
  };
  compare::Result first;
  first.paired = true;
  first.rows = {row("a/fluke", Verdict::slower, 0.90), row("a/real", Verdict::slower, 0.80),
                row("a/gone", Verdict::slower, 0.85), row("a/steady", Verdict::same, 1.00)};
  compare::Result fresh;
  fresh.rows = {row("a/fluke", Verdict::same, 0.99), row("a/real", Verdict::slower, 0.81),
                row("a/steady", Verdict::slower, 0.80)};
  EXPECT_EQ(first.exit_code(), 1);
  compare::apply_confirmation(first, fresh);
  std::map<std::string, const compare::Row*> by_id;
  for (const auto& r : first.rows) by_id[r.id] = &r;
  EXPECT_EQ(by_id["a/real"]->d.verdict, Verdict::slower);
  EXPECT_NE(by_id["a/real"]->d.note.find("confirmed: slower on 5 fresh rounds (-19.0%"), std::string::npos)
      << by_id["a/real"]->d.note;
  EXPECT_EQ(by_id["a/fluke"]->d.verdict, Verdict::noisy);
  EXPECT_NE(by_id["a/fluke"]->d.note.find("not confirmed: same on 5 fresh rounds"), std::string::npos)
      << by_id["a/fluke"]->d.note;
  EXPECT_EQ(by_id["a/gone"]->d.verdict, Verdict::noisy);  // absent from the fresh rounds
  EXPECT_NE(by_id["a/gone"]->d.note.find("not decided again"), std::string::npos);
  // A record the first rounds did not find slower is not re-decided by the confirmation.
  EXPECT_EQ(by_id["a/steady"]->d.verdict, Verdict::same);
  EXPECT_EQ(first.regressions(), 1u);
  EXPECT_EQ(first.rows.front().id, "a/real");  // regressions first
}

TEST(DecideRuns, PairedRoundsCancelDriftShared) {
  // Each round drifts by up to +-20% (both builds alike); the paired ratios see only the change.
  compare::Rng rng(23);
  int aa = 0, caught = 0;
  for (int i = 0; i < 1000; ++i) {
    std::vector<double> b, n, p;
    for (int r = 0; r < 5; ++r) {
      const double drift = std::exp(0.1 * rng.normal());
      b.push_back(100 * drift * std::exp(0.01 * rng.normal()));
      n.push_back(100 * drift * std::exp(0.01 * rng.normal()));
      p.push_back(100 / 1.1 * drift * std::exp(0.01 * rng.normal()));
    }
    aa += compare::decide_runs(b, n, true, Better::higher, 0.05, compare::Settings{}).verdict == Verdict::slower;
    caught += compare::decide_runs(b, p, true, Better::higher, 0.05, compare::Settings{}).verdict == Verdict::slower;
    // Unpaired, the shared drift can only blur the change, never turn it into an improvement.
    if (i == 0) {
      EXPECT_NE(compare::decide_runs(b, p, false, Better::higher, 0.05, compare::Settings{}).verdict, Verdict::faster);
    }
  }
  EXPECT_LT(aa, 10);
  EXPECT_GE(caught, 950);
}

TEST(DecideRuns, TooFewRoundsIsNoVerdict) {
  const auto d = compare::decide_runs({100, 100}, {50, 50}, true, Better::higher, 0.05, compare::Settings{});
  EXPECT_EQ(d.verdict, Verdict::noisy);
  EXPECT_NE(d.note.find("paired rounds"), std::string::npos);
}

// Records of K runs as gtb run --runs K writes them.
std::vector<Record> k_runs(const std::string& workload, int k, double seconds, double spread, std::uint64_t seed) {
  compare::Rng rng(seed);
  std::vector<std::vector<Record>> runs;
  for (int i = 0; i < k; ++i)
    runs.push_back({rate_record(workload, json{{"b", 1}}, lognormal(rng, 10, seconds * std::exp(spread * rng.normal()), 0.01))});
  return driver::merge_runs(runs);
}

TEST(MergeRuns, KeepsEveryRunAndPoolsTheSamples) {
  compare::Rng rng(5);
  Record a = rate_record("w", json{{"b", 1}}, lognormal(rng, 10, 1e-3, 0.01));
  Record b = rate_record("w", json{{"b", 1}}, lognormal(rng, 12, 2e-3, 0.01));
  Record only_first = rate_record("x", json{{"b", 1}}, lognormal(rng, 10, 1e-3, 0.01));
  const auto merged = driver::merge_runs({{a, only_first}, {b}});
  ASSERT_EQ(merged.size(), 2u);
  const Record& w = merged[0];
  ASSERT_EQ(w.runs.size(), 2u);
  EXPECT_EQ(w.runs[1].run, 2);
  EXPECT_DOUBLE_EQ(*w.runs[0].value, *a.value);
  EXPECT_DOUBLE_EQ(*w.runs[1].value, *b.value);
  EXPECT_EQ(w.samples.size(), 22u);
  EXPECT_EQ(w.stats->count, 22);
  // Each run's samples stay a group of their own (a run's repetitions would each stay one).
  EXPECT_EQ(w.sample_groups, (std::vector<std::int64_t>{std::int64_t(a.samples.size()), std::int64_t(b.samples.size())}));
  EXPECT_TRUE(merged[1].sample_groups.empty());
  EXPECT_DOUBLE_EQ(*w.value, w.metric_of_seconds(w.stats->median));
  EXPECT_EQ(merged[1].runs.size(), 1u);
  // A pair's rounds of every run, appended in run order (a run without them adds none).
  Record pa = a, pb = b;
  pa.paired = {{"w2", {1, 2}, {3, 4}}};
  pb.paired = {{"w2", {5}, {6}}};
  const auto rounds = driver::merge_runs({{pa}, {pb}, {a}});
  ASSERT_EQ(rounds[0].paired.size(), 1u);
  EXPECT_EQ(rounds[0].paired[0].with, "w2");
  EXPECT_EQ(rounds[0].paired[0].a_s, (std::vector<double>{1, 2, 5}));
  EXPECT_EQ(rounds[0].paired[0].b_s, (std::vector<double>{3, 4, 6}));
  // One run alone comes back as it was.
  EXPECT_TRUE(driver::merge_runs({{a}})[0].runs.empty());
  // A run that failed makes the record failed, and says which run.
  Record bad = b;
  bad.status = Status::failed;
  bad.status_detail = "cudaErrorIllegalAddress";
  bad.value.reset();
  bad.samples.clear();
  bad.stats.reset();
  const auto failed = driver::merge_runs({{a}, {bad}});
  EXPECT_EQ(failed[0].status, Status::failed);
  EXPECT_EQ(failed[0].status_detail, "run 2: cudaErrorIllegalAddress");
  EXPECT_FALSE(failed[0].value.has_value());
}

// Every run weighs the same in the merged statistics: a disturbed run whose stopping rule kept 200
// slow samples does not outvote two calm runs of 10 (pooled, its samples would be the median); runs
// of equal counts give the pooled statistics exactly; every sample is kept either way.
TEST(MergeRuns, EveryRunWeighsTheSameHoweverManySamplesItKept) {
  compare::Rng rng(8);
  std::vector<std::vector<Record>> runs;
  for (const auto& [n, seconds] : std::vector<std::pair<int, double>>{{10, 1e-3}, {200, 2e-3}, {10, 1.05e-3}})
    runs.push_back({rate_record("w", json{{"b", 1}}, lognormal(rng, n, seconds, 0.01))});
  const auto merged = driver::merge_runs(runs);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].samples.size(), 220u);
  EXPECT_EQ(merged[0].stats->count, 220);
  EXPECT_LT(merged[0].stats->median, 1.2e-3);
  EXPECT_GT(merged[0].stats->median, 0.9e-3);
  EXPECT_GT(compute_stats(merged[0].samples).median, 1.9e-3);  // pooled: the disturbed run's
  EXPECT_DOUBLE_EQ(*merged[0].value, merged[0].metric_of_seconds(merged[0].stats->median));
  runs[1] = {rate_record("w", json{{"b", 1}}, lognormal(rng, 10, 2e-3, 0.01))};
  const auto equal = driver::merge_runs(runs);
  const Stats pooled = compute_stats(equal[0].samples);
  EXPECT_DOUBLE_EQ(equal[0].stats->median, pooled.median);
  EXPECT_DOUBLE_EQ(equal[0].stats->q1, pooled.q1);
  EXPECT_DOUBLE_EQ(equal[0].stats->stddev, pooled.stddev);
}

// A per-run figure (a step's milliseconds) follows the runs: the median over the ok runs, not the
// first run's, so that a first run on a slow moment does not speak for the file.
TEST(MergeRuns, CountersAreTheMedianOverTheOkRuns) {
  compare::Rng rng(6);
  std::vector<std::vector<Record>> runs;
  for (const double ms : {30.0, 20.0, 21.0}) {
    Record r = rate_record("w", json{{"b", 1}}, lognormal(rng, 10, ms * 1e-3, 0.01));
    r.counters["step_ms"] = {ms, "ms"};
    r.counters["loss_first"] = {2.5, "nats"};
    runs.push_back({r});
  }
  // A counter one run lacks keeps the first ok run's value.
  runs[1][0].counters.erase("loss_first");
  const auto merged = driver::merge_runs(runs);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_DOUBLE_EQ(merged[0].counters.at("step_ms").value, 21.0);
  EXPECT_EQ(merged[0].counters.at("step_ms").unit, "ms");
  EXPECT_DOUBLE_EQ(merged[0].counters.at("loss_first").value, 2.5);
}

TEST(MergeRuns, RoundTripsThroughTheResultsFile) {
  const auto recs = k_runs("w", 3, 1e-3, 0.01, 9);
  const json doc = make_document(testing::context_json("Test GPU"), "quick", json::array(), recs, json::object(), 3);
  validate_document(doc);
  const auto back = records_of(doc);
  ASSERT_EQ(back[0].runs.size(), 3u);
  EXPECT_DOUBLE_EQ(*back[0].runs[2].value, *recs[0].runs[2].value);
  EXPECT_EQ(back[0].runs[2].stats->count, 10);
  EXPECT_EQ(doc["runs"], 3);
  json bad = doc;
  bad["records"][0]["runs"][1].erase("value");
  EXPECT_THROW(validate_document(bad), std::runtime_error);
}

TEST(CompareRuns, AFileComparedWithItselfIsAllSame) {
  const auto recs = k_runs("w", 3, 1e-3, 0.05, 11);
  const auto res = compare::compare_documents(doc_of(recs), doc_of(recs), compare::Config{});
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::same);
  EXPECT_EQ(res.rows[0].evidence, "runs");
  EXPECT_EQ(res.rows[0].base_runs, 3u);
  EXPECT_EQ(res.exit_code(), 0);
}

TEST(CompareRuns, RunsBaselineAgainstOneNewRunIsWeakEvidence) {
  const auto base = k_runs("w", 3, 1e-3, 0.01, 12);
  const auto next = k_runs("w", 1, 1.3e-3, 0.01, 13);
  const auto res = compare::compare_documents(doc_of(base), doc_of(next), compare::Config{});
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::slower);
  EXPECT_NE(res.rows[0].d.note.find("weak evidence"), std::string::npos);
  EXPECT_EQ(res.rows[0].new_runs, 1u);
}

TEST(CompareRuns, PairedByRunNumber) {
  compare::Config c;
  c.paired = true;
  const auto base = k_runs("w", 4, 1e-3, 0.01, 14);
  auto next = base;
  for (auto& x : next[0].runs) *x.value /= 1.2;
  next[0].runs.pop_back();  // an unpaired run is left out
  const auto res = compare::compare_documents(doc_of(base), doc_of(next), c);
  EXPECT_EQ(res.rows[0].evidence, "paired rounds");
  EXPECT_EQ(res.rows[0].base_runs, 3u);
  EXPECT_EQ(res.rows[0].d.verdict, Verdict::slower);
  EXPECT_NEAR(res.rows[0].d.ratio, 1 / 1.2, 1e-9);
}

}  // namespace
}  // namespace gtb

// A family whose records gained a counter in the merge (a percent of a peak another family
// published) derives its findings again; a family whose records the merge left alone does not.
TEST(MergeEnrichment, NamesOnlyFamiliesWhoseRecordsGainedCounters) {
  auto rec = [](const std::string& family, const std::string& id) {
    gtb::Record r;
    r.family = family, r.workload = "w", r.variant = "v", r.id = id;
    r.status = gtb::Status::ok;
    r.value = 1.0;
    r.counters["tflops"] = {0.5, "TFLOP/s"};
    r.info["gemm_precision"] = "fp32";
    return r;
  };
  const std::vector<gtb::Record> before = {rec("alpha", "alpha/w/v/cpu"), rec("beta", "beta/w/v/cpu")};
  gtb::json fams = gtb::json::array({{{"name", "alpha"}, {"publishes", {{"peaks", "best"}}}}, {{"name", "beta"}}});
  gtb::json no_peak = {{"alpha", {{"best", gtb::json::object()}}}};
  EXPECT_TRUE(gtb::driver::families_enriched_by_merge(
                  before, gtb::make_merged_document(gtb::json::object(), "quick", fams, before, no_peak, 1))
                  .empty());
  gtb::json peak = {{"alpha", {{"best", {{"cpu", {{"fp32", 1.0}}}}}}}};
  std::vector<gtb::Record> only_beta = before;
  only_beta[0].info.erase("gemm_precision");  // alpha's record names no precision: not enriched
  const auto again = gtb::driver::families_enriched_by_merge(
      only_beta, gtb::make_merged_document(gtb::json::object(), "quick", fams, only_beta, peak, 1));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], "beta");
}

// With several runs every family's findings are derived again from the merged records (each run's
// binary saw its own run only); with one, only the families the merge enriched.
TEST(MergeEnrichment, SeveralRunsDeriveEveryFamilyAgain) {
  gtb::Record r;
  r.family = "alpha", r.workload = "w", r.variant = "v", r.id = "alpha/w/v/cpu";
  r.status = gtb::Status::ok;
  r.value = 1.0;
  const std::vector<gtb::Record> before = {r};
  gtb::json fams = gtb::json::array({{{"name", "alpha"}}, {{"name", "beta"}}});
  gtb::json findings = {{"alpha", {{"x", 1}}}, {"beta", {{"y", 2}}}};
  const gtb::json doc = gtb::make_merged_document(gtb::json::object(), "quick", fams, before, findings, 3);
  EXPECT_TRUE(gtb::driver::families_to_derive_again(before, doc, 1).empty());
  const auto all = gtb::driver::families_to_derive_again(before, doc, 3);
  EXPECT_EQ(all, (std::vector<std::string>{"alpha", "beta"}));
}
