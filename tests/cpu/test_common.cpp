// The shared random inputs and output checks: distributions, determinism whatever the thread count,
// and checks that name the first bad element.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/random.h"
#include "kernels/common/verify.h"

namespace {

template <class T>
std::vector<T> normal_with_threads(std::size_t n, std::uint64_t seed, T sigma, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<T> v(n);
  gtb::fill_normal(v.data(), n, seed, sigma);
  omp_set_num_threads(saved);
  return v;
}

template <class T>
void expect_normal_moments(const std::vector<T>& v, double sigma) {
  double s = 0, s2 = 0, s4 = 0;
  std::size_t within = 0;
  for (T x : v) {
    ASSERT_TRUE(std::isfinite(double(x)));
    const double z = double(x) / sigma;
    s += z, s2 += z * z, s4 += z * z * z * z;
    within += std::fabs(z) <= 1.0;
  }
  const double n = double(v.size());
  const double mean = s / n, var = s2 / n - mean * mean;
  // 1e6 draws: the mean's standard error is 0.001, the variance's 0.0014.
  EXPECT_NEAR(mean, 0.0, 0.006);
  EXPECT_NEAR(var, 1.0, 0.008);
  EXPECT_NEAR(s4 / n, 3.0, 0.05);               // a normal's fourth moment (a uniform's is 1.8)
  EXPECT_NEAR(double(within) / n, 0.6827, 0.003);  // P(|z| <= 1)
}

TEST(FillNormal, FloatHasNormalMomentsAndScales) {
  expect_normal_moments(normal_with_threads<float>(1000000, 7, 1.0f, 2), 1.0);
  expect_normal_moments(normal_with_threads<float>(1000000, 8, 0.25f, 2), 0.25);
}

TEST(FillNormal, DoubleHasNormalMoments) { expect_normal_moments(normal_with_threads<double>(1000000, 9, 2.0, 2), 2.0); }

TEST(FillNormal, SameDataWhateverTheThreadCount) {
  for (std::size_t n : {1u, 2u, 7u, 1001u, 100000u}) {
    const auto one = normal_with_threads<float>(n, 42, 1.0f, 1);
    const auto two = normal_with_threads<float>(n, 42, 1.0f, 2);
    const auto three = normal_with_threads<float>(n, 42, 1.0f, 3);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), n * sizeof(float)), 0) << "n=" << n;
    ASSERT_EQ(std::memcmp(one.data(), three.data(), n * sizeof(float)), 0) << "n=" << n;
  }
}

TEST(FillNormal, OddLengthIsFilledAndPrefixesAgree) {
  // Element i does not depend on n: a longer fill starts with the shorter one.
  const auto a = normal_with_threads<float>(1001, 5, 1.0f, 2);
  const auto b = normal_with_threads<float>(1000, 5, 1.0f, 2);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), b.size() * sizeof(float)), 0);
  EXPECT_TRUE(std::isfinite(a.back()));
  EXPECT_NE(a.back(), 0.0f);
}

TEST(FillNormal, SeedsGiveDifferentData) {
  const auto a = normal_with_threads<float>(1000, 1, 1.0f, 2);
  const auto b = normal_with_threads<float>(1000, 2, 1.0f, 2);
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 5u);
}

TEST(Poison, EveryElementIsNaN) {
  std::vector<float> f(200000, 1.0f);
  std::vector<double> d(3, 1.0);
  gtb::poison(f.data(), f.size());
  gtb::poison(d.data(), d.size());
  for (float x : f) ASSERT_TRUE(std::isnan(x));
  for (double x : d) ASSERT_TRUE(std::isnan(x));
}

TEST(CompareElementwise, PassesWithinToleranceAndReportsErrors) {
  const std::size_t n = 100000;
  std::vector<double> ref(n);
  std::vector<float> got(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = 1.0 + double(i) * 1e-3, got[i] = float(ref[i]);
  const gtb::ErrorReport e = gtb::compare_elementwise(got.data(), ref.data(), n, 1e-6, 0.0);
  EXPECT_TRUE(e.ok) << e.detail;
  EXPECT_EQ(e.bad_count, 0u);
  EXPECT_GT(e.max_abs_err, 0.0);  // float rounding of the reference
  EXPECT_LT(e.max_rel_err, 1e-7);
  EXPECT_NE(e.detail.find("all 100000 elements"), std::string::npos) << e.detail;
}

TEST(CompareElementwise, NamesTheLowestBadIndexWhateverTheThreadCount) {
  const std::size_t n = 100000;
  std::vector<double> ref(n, 2.0);
  std::vector<float> got(n, 2.0f);
  got[n - 5] = 3.0f;                                   // in the last thread's range
  got[n / 2 + 1] = std::numeric_limits<float>::quiet_NaN();  // poison left behind
  got[70001] = 2.5f;
  for (int threads : {1, 2, 4}) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    const gtb::ErrorReport e = gtb::compare_elementwise(got.data(), ref.data(), n, 1e-6, 0.0);
    omp_set_num_threads(saved);
    EXPECT_FALSE(e.ok);
    EXPECT_EQ(e.bad_count, 3u);
    EXPECT_EQ(e.first_bad, n / 2 + 1) << threads << " threads";
    EXPECT_NEAR(e.max_abs_err, 1.0, 1e-12);  // the NaN does not count towards the error sizes
    EXPECT_NE(e.detail.find("3 of 100000 elements"), std::string::npos) << e.detail;
    EXPECT_NE(e.detail.find("first at index 50001"), std::string::npos) << e.detail;
  }
}

TEST(CompareElementwise, ReferenceFunctionMatchesReferenceArray) {
  const std::size_t n = 5000;
  std::vector<float> b(n), c(n), a(n);
  gtb::fill_uniform(b.data(), n, 3, 0.5f, 1.5f);
  gtb::fill_uniform(c.data(), n, 4, 0.5f, 1.5f);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = double(b[i]) + 3.0 * double(c[i]), a[i] = b[i] + 3.0f * c[i];
  a[1234] += 0.01f;
  const auto by_array = gtb::compare_elementwise(a.data(), ref.data(), n, 1e-6, 0.0);
  const auto by_fn = gtb::compare_elementwise_fn(a.data(), n, 1e-6, 0.0,
                                                 [&](std::size_t i) { return double(b[i]) + 3.0 * double(c[i]); });
  EXPECT_FALSE(by_fn.ok);
  EXPECT_EQ(by_fn.first_bad, 1234u);
  EXPECT_EQ(by_fn.bad_count, by_array.bad_count);
  EXPECT_EQ(by_fn.detail, by_array.detail);
  EXPECT_DOUBLE_EQ(by_fn.max_abs_err, by_array.max_abs_err);
}

}  // namespace
