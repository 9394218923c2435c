// A/A calibration of gtb compare's default decision rule on synthetic lognormal samples.
#include <gtest/gtest.h>

#include <cstdio>

#include "harness/driver/common/compare_core.h"
#include "test_compare_util.h"

namespace gtb {
namespace {

// Sample counts and noise like the harness produces: its stopping rule keeps sampling until the
// median's CI is about 1% wide, so noisier records carry more samples.
struct Noise {
  double sigma;  // lognormal sigma of one sample (~ its coefficient of variation)
  std::size_t n;
};
const Noise kRealistic[] = {{0.01, 10}, {0.02, 10}, {0.03, 20}, {0.05, 30}};

// Fraction of simulated compares that come out `wanted`, NEW's times being `factor` x BASE's.
double rate_of(compare::Verdict wanted, double factor, const Noise& nz, int trials, std::uint64_t seed) {
  compare::Rng rng(seed);
  compare::Settings s;
  int hits = 0;
  for (int t = 0; t < trials; ++t) {
    auto bt = testing::lognormal(rng, nz.n, 1e-3, nz.sigma);
    auto nt = testing::lognormal(rng, nz.n, 1e-3 * factor, nz.sigma);
    std::vector<double> bv, nv;  // as throughput: higher is better
    for (double x : bt) bv.push_back(1.0 / x);
    for (double x : nt) nv.push_back(1.0 / x);
    const auto d = compare::decide(1.0 / median(bt), 1.0 / median(nt), bv, nv, Better::higher, s.threshold, s,
                                   rng.next());
    if (d.verdict == wanted) ++hits;
  }
  return double(hits) / trials;
}

TEST(CompareCalibration, AAFalseAlarmsBelowOnePercent) {
  int trials = 0;
  double alarms = 0;
  for (const Noise& nz : kRealistic) {
    const double r = rate_of(compare::Verdict::slower, 1.0, nz, 400, 1000 + nz.n);
    std::printf("A/A sigma=%.2f n=%zu: false regressions %.2f%%\n", nz.sigma, nz.n, 100 * r);
    EXPECT_LT(r, 0.01) << "sigma " << nz.sigma << " n " << nz.n;
    alarms += r * 400;
    trials += 400;
  }
  EXPECT_LT(alarms / trials, 0.01);
}

TEST(CompareCalibration, PlantedTenPercentSlowdownCaught) {
  for (const Noise& nz : kRealistic) {
    const double r = rate_of(compare::Verdict::slower, 1.10, nz, 200, 2000 + nz.n);
    std::printf("10%% slower sigma=%.2f n=%zu: caught %.1f%%\n", nz.sigma, nz.n, 100 * r);
    EXPECT_GE(r, 0.95) << "sigma " << nz.sigma << " n " << nz.n;
  }
}

TEST(CompareCalibration, ImprovementsAreNeverRegressions) {
  for (const Noise& nz : kRealistic) EXPECT_EQ(rate_of(compare::Verdict::slower, 0.8, nz, 100, 3000 + nz.n), 0.0);
}

TEST(CompareCalibration, SimulatedAAOnADocumentIsLow) {
  compare::Rng rng(99);
  std::vector<Record> recs;
  for (int i = 0; i < 8; ++i)
    recs.push_back(testing::rate_record("w" + std::to_string(i), json{{"bytes", 1 << i}}, testing::lognormal(rng, 20, 1e-3, 0.03)));
  const json doc = testing::doc_of(recs);
  const auto cal = compare::calibrate(doc, doc, compare::Config{}, 100);
  EXPECT_EQ(cal.records, 8u);
  EXPECT_EQ(cal.trials, 800u);
  EXPECT_LT(double(cal.false_slower) / double(cal.trials), 0.02);
  EXPECT_LT(cal.expected_false_regressions, 0.2);
}

TEST(CompareCalibration, SimulatedAAFlagsAnUnderSampledNoisyRecord) {
  // Few, very noisy samples: the simulation must show these records as noisy, not "same".
  compare::Rng rng(5);
  const json doc = testing::doc_of({testing::rate_record("w", json{{"b", 1}}, testing::lognormal(rng, 6, 1e-3, 0.3))});
  const auto cal = compare::calibrate(doc, doc, compare::Config{}, 200);
  EXPECT_GT(cal.noisy, 20u);
}

}  // namespace
}  // namespace gtb
