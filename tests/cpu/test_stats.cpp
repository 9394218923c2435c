// Statistics and the stopping rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "harness/document/stats.h"
#include "harness/runtime/stopping.h"

using gtb::compute_stats;

TEST(Stats, KnownValuesMatchNumpyType7) {
  // numpy: median 3, q1 2, q3 4, mean 3, std(ddof=1) 1.5811388300841898
  const auto s = compute_stats({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.iqr, 2);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, 1.5811388300841898, 1e-15);
  EXPECT_NEAR(s.cv, 1.5811388300841898 / 3, 1e-15);
  EXPECT_EQ(s.count, 5);
}

TEST(Stats, EvenCountInterpolates) {
  // numpy.percentile([1,2,3,10], [25,50,75]) = [1.75, 2.5, 4.75]
  const auto s = compute_stats({10, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 4.75);
}

// One median everywhere: median, median_inplace and compute_stats agree to the last bit, odd and even.
TEST(Stats, OneMedianToTheLastBit) {
  for (std::vector<double> v : {std::vector<double>{0.3, 0.1, 0.7}, std::vector<double>{0.1, 0.7, 0.3, 0.2000001},
                                std::vector<double>{1e-3, 3.3e-3}, std::vector<double>{5.0}}) {
    const double m = gtb::median(v);
    std::vector<double> w = v;
    EXPECT_EQ(gtb::median_inplace(w), m);
    EXPECT_EQ(compute_stats(v).median, m);
  }
  EXPECT_EQ(gtb::median({4.0, 1.0, 3.0, 2.0}), 2.5);  // the two middle values' mean, not the upper one
  std::vector<double> empty;
  EXPECT_THROW(gtb::median_inplace(empty), std::invalid_argument);
}

// A quantile at any p of data in any order: numpy's default (type 7), the median and the quartiles
// of compute_stats to the last bit, the ends at p <= 0 and p >= 1.
TEST(Stats, QuantileOfUnsortedData) {
  // numpy.percentile([1,2,3,10], [0,10,90,100]) = [1, 1.3, 7.9, 10]
  const std::vector<double> v{10, 1, 3, 2};
  EXPECT_EQ(gtb::quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(gtb::quantile(v, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(gtb::quantile(v, 0.9), 7.9);
  EXPECT_EQ(gtb::quantile(v, 1.0), 10);
  EXPECT_EQ(gtb::quantile(v, -1.0), 1);
  EXPECT_EQ(gtb::quantile(v, 2.0), 10);
  const std::vector<double> w{0.1, 0.7, 0.3, 0.2000001, 0.9};
  const auto s = compute_stats(w);
  EXPECT_EQ(gtb::quantile(w, 0.5), s.median);
  EXPECT_EQ(gtb::quantile(w, 0.5), gtb::median(w));
  EXPECT_EQ(gtb::quantile(w, 0.25), s.q1);
  EXPECT_EQ(gtb::quantile(w, 0.75), s.q3);
  EXPECT_EQ(gtb::quantile({4.0}, 0.9), 4);
  EXPECT_THROW(gtb::quantile({}, 0.5), std::invalid_argument);
}

TEST(Stats, SingleSample) {
  const auto s = compute_stats({0.25});
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_DOUBLE_EQ(s.iqr, 0);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_EQ(s.count, 1);
}

TEST(Stats, RejectsEmptyAndNonFinite) {
  EXPECT_THROW(compute_stats({}), std::invalid_argument);
  EXPECT_THROW(compute_stats({1.0, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(compute_stats({1.0, std::numeric_limits<double>::infinity()}), std::invalid_argument);
}

TEST(Stats, MedianCiShrinksWithMoreSamples) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(0.0, 0.1);
  std::vector<double> small, large;
  for (int i = 0; i < 20; ++i) small.push_back(d(rng));
  for (int i = 0; i < 2000; ++i) large.push_back(d(rng));
  const double a = gtb::median_ci_relative_halfwidth(small), b = gtb::median_ci_relative_halfwidth(large);
  EXPECT_GT(a, b * 3);
  EXPECT_TRUE(std::isinf(gtb::median_ci_relative_halfwidth({1, 1, 1})));
  EXPECT_DOUBLE_EQ(gtb::median_ci_relative_halfwidth(std::vector<double>(50, 2.0)), 0.0);
}

// Samples that came in groups measured apart (repetitions, runs): each group tight around its own
// level, the levels apart (a host that sometimes shares one core between the threads). Pooled, the
// many samples read a narrow interval; the groups' medians show how far the moment moved the median.
TEST(Stats, MedianNoiseReadsTheSpreadOfGroupsMeasuredApart) {
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> d(0.0, 0.005);
  auto group = [&](double level) {
    std::vector<double> g;
    for (int i = 0; i < 20; ++i) g.push_back(level * d(rng));
    return g;
  };
  // Nine groups: six at 1.0, three at 2.0.
  std::vector<std::vector<double>> apart;
  for (double level : {1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0}) apart.push_back(group(level));
  std::vector<double> pooled;
  for (const auto& g : apart) pooled.insert(pooled.end(), g.begin(), g.end());
  const double within = gtb::median_ci_relative_halfwidth(pooled), grouped = gtb::median_noise_relative_halfwidth(apart);
  EXPECT_LT(within, 0.05);  // 180 samples: a narrow interval, though a third of them sit twice as high
  EXPECT_GT(grouped, 0.4);  // the group medians' interval spans both levels
  // Groups that agree: the pooled interval stands (the groups add nothing).
  std::vector<std::vector<double>> alike;
  for (int i = 0; i < 9; ++i) alike.push_back(group(1.0));
  std::vector<double> all;
  for (const auto& g : alike) all.insert(all.end(), g.begin(), g.end());
  EXPECT_LT(gtb::median_noise_relative_halfwidth(alike), 0.01);
  EXPECT_GE(gtb::median_noise_relative_halfwidth(alike), gtb::median_ci_relative_halfwidth(all));
  // Two to five groups: half the range of their medians.
  const double three = gtb::median_noise_relative_halfwidth({group(1.0), group(1.0), group(1.5)});
  EXPECT_NEAR(three, 0.25, 0.02);
  // One group, or empty groups beside it: the samples' own interval. Too few samples: no figure.
  const std::vector<double> one = group(1.0);
  EXPECT_DOUBLE_EQ(gtb::median_noise_relative_halfwidth({one, {}}), gtb::median_ci_relative_halfwidth(one));
  EXPECT_TRUE(std::isinf(gtb::median_noise_relative_halfwidth({{1.0, 1.1}, {2.0, 2.1}})));
}

namespace {
gtb::StopRule rule() {
  gtb::StopRule r;
  r.min_samples = 10;
  r.max_samples = 100;
  r.noise_target = 0.01;
  r.budget_seconds = 1.0;
  r.hard_min_samples = 3;
  return r;
}
}  // namespace

TEST(StopDecision, ContinuesBelowMinimumSamples) {
  EXPECT_EQ(gtb::stop_decision(rule(), std::vector<double>(5, 1.0), 0.1), "");
}
TEST(StopDecision, StopsAtNoiseTargetOnceMinimumIsIn) {
  EXPECT_EQ(gtb::stop_decision(rule(), std::vector<double>(10, 1.0), 0.1), "noise_target");
}
TEST(StopDecision, NoisySamplesContinueUntilBudget) {
  std::vector<double> noisy;
  for (int i = 0; i < 12; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  EXPECT_EQ(gtb::stop_decision(rule(), noisy, 0.5), "");
  EXPECT_EQ(gtb::stop_decision(rule(), noisy, 1.0), "time_budget");
}
TEST(StopDecision, MaxSamplesCapsEvenWhenNoisy) {
  std::vector<double> noisy;
  for (int i = 0; i < 100; ++i) noisy.push_back(i % 2 ? 1.0 : 3.0);
  EXPECT_EQ(gtb::stop_decision(rule(), noisy, 0.0), "max_samples");
}
TEST(StopDecision, SlowCaseStopsAtHardMinimum) {
  // 3 samples of 0.4 s: reaching 10 would take 4 s, over twice the 1 s budget.
  EXPECT_EQ(gtb::stop_decision(rule(), {0.4, 0.5, 0.45}, 1.2), "time_budget");
  EXPECT_EQ(gtb::stop_decision(rule(), {0.4, 0.5}, 1.2), "");
}

TEST(RunSamples, CalibratesRepetitionsForFastOperations) {
  double clock = 0;
  auto now = [&] { return clock; };
  auto sampler = [&](std::int64_t reps) {
    const double t = 1e-6 * double(reps);  // 1 us per repetition
    clock += t;
    return t;
  };
  gtb::StopRule r = rule();
  r.min_sample_seconds = 100e-6;
  const auto s = gtb::run_samples(r, sampler, now);
  EXPECT_GE(double(s.reps_per_sample) * 1e-6, 100e-6);
  EXPECT_NEAR(s.stats.median, 1e-6, 1e-12);
  EXPECT_EQ(s.stop_reason, "noise_target");
  EXPECT_EQ(s.stats.count, 10);
  EXPECT_GE(s.warmup_samples, 2);
}

TEST(RunSamples, BudgetBoundsASlowNoisyCase) {
  double clock = 0;
  int i = 0;
  auto sampler = [&](std::int64_t) {
    const double t = (++i % 2) ? 0.1 : 0.3;
    clock += t;
    return t;
  };
  const auto s = gtb::run_samples(rule(), sampler, [&] { return clock; });
  EXPECT_EQ(s.stop_reason, "time_budget");
  EXPECT_LE(clock, 2.5 * rule().budget_seconds + 0.3);
  EXPECT_GE(s.stats.count, rule().hard_min_samples);
}

TEST(RunSamples, RejectsBadRulesAndBadSamples) {
  gtb::StopRule bad = rule();
  bad.min_samples = 0;
  EXPECT_THROW(gtb::run_samples(bad, [](std::int64_t) { return 1.0; }), std::invalid_argument);
  EXPECT_THROW(gtb::run_samples(rule(), [](std::int64_t) { return -1.0; }), std::runtime_error);
  EXPECT_THROW(gtb::run_samples(rule(), [](std::int64_t) { return std::nan(""); }), std::runtime_error);
}

TEST(RunSamples, QuickRuleIsSmallerThanFull) {
  const auto q = gtb::suite_rule(gtb::Suite::quick), f = gtb::suite_rule(gtb::Suite::full);
  EXPECT_LT(q.budget_seconds, f.budget_seconds);
  EXPECT_LE(q.min_samples, f.min_samples);
  EXPECT_GE(q.noise_target, f.noise_target);
}
