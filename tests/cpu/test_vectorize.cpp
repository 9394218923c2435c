// CPU loops of the vectorize family (scalar, autovec, openmp) and the shared elementwise math against
// float64 references, at sizes around every vector width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/random.h"
#include "kernels/common/verify.h"
#include "kernels/vectorize/cpu/vectorize.h"
#include "kernels/vectorize/elementwise.h"
#include "tests/common/openmp_threads.h"

namespace {

using gtb::cpu::Loop;

constexpr float kA = 0.75f;
constexpr gtb::ChainParams kChain{1.5f, 0.25f};
// Odd sizes, sizes around the SSE/AVX/AVX-512 widths (4, 8, 16 floats) and a large odd size the
// OpenMP loop splits unevenly.
const std::vector<std::size_t> kSizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 1000, 4099, 65537};
const Loop kLoops[] = {Loop::scalar, Loop::autovec, Loop::openmp};
constexpr std::size_t kGuard = 8;  // sentinel elements on each side of the output
constexpr float kSentinel = 12345.0f;

class EveryLoop : public ::testing::TestWithParam<Loop> {};

// The output sits at an odd offset inside a guarded buffer: unaligned starts exercise the peeled
// prologue of the vectorized loops, the guards catch writes outside [0, n).
struct Guarded {
  explicit Guarded(std::size_t count) : buf(count + 2 * kGuard + 1, kSentinel), n(count) {}
  float* data() { return buf.data() + kGuard + 1; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuard + 1; ++i)
      if (buf[i] != kSentinel) return false;
    for (std::size_t i = kGuard + 1 + n; i < buf.size(); ++i)
      if (buf[i] != kSentinel) return false;
    return true;
  }
  std::vector<float> buf;
  std::size_t n;
};

TEST_P(EveryLoop, AxpyMatchesFloat64ReferenceAtEverySize) {
  for (std::size_t n : kSizes) {
    std::vector<float> x(n + 1), y0(n + 1);
    gtb::fill_uniform(x.data(), n + 1, 11, 0.5f, 1.5f);
    gtb::fill_uniform(y0.data(), n + 1, 12, -1.0f, 1.0f);
    Guarded y(n);
    std::copy(y0.begin(), y0.begin() + static_cast<std::ptrdiff_t>(n), y.data());
    gtb::cpu::axpy(GetParam(), kA, x.data() + 1, y.data(), n);  // x + 1: the input unaligned too
    std::vector<double> ref(n);
    gtb::cpu::axpy_reference(kA, x.data() + 1, y0.data(), ref.data(), n);
    const auto rep = gtb::compare_elementwise(y.data(), ref.data(), n, gtb::kAxpyRtol, gtb::kAxpyAtol);
    EXPECT_TRUE(rep.ok) << "n=" << n << ": " << rep.detail;
    EXPECT_TRUE(y.guards_intact()) << "n=" << n << ": wrote outside the array";
  }
}

TEST_P(EveryLoop, ChainMatchesFloat64ReferenceAtEverySize) {
  for (std::size_t n : kSizes) {
    std::vector<float> x(n);
    gtb::fill_uniform(x.data(), n, 21, -3.0f, 3.0f);
    Guarded y(n);
    gtb::poison(y.data(), n);
    gtb::cpu::chain(GetParam(), kChain, x.data(), y.data(), n);
    std::vector<double> ref(n);
    gtb::cpu::chain_reference(kChain, x.data(), ref.data(), n);
    const auto rep = gtb::compare_elementwise(y.data(), ref.data(), n, gtb::kChainRtol, gtb::kChainAtol);
    EXPECT_TRUE(rep.ok) << "n=" << n << ": " << rep.detail;
    EXPECT_TRUE(y.guards_intact()) << "n=" << n << ": wrote outside the array";
  }
}

TEST_P(EveryLoop, ChainHandlesExtremeInputs) {
  // Far outside the bench's range: the exp clamp must keep the result finite and right.
  std::vector<float> x = {-1e30f, -200.0f, -60.0f, -10.0f, -1e-30f, 0.0f, 1e-30f, 10.0f, 60.0f, 200.0f, 1e30f};
  const std::size_t n = x.size();
  std::vector<float> y(n);
  gtb::poison(y.data(), n);
  gtb::cpu::chain(GetParam(), gtb::ChainParams{1.0f, 0.0f}, x.data(), y.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << "x=" << x[i];
    const double ref = gtb::cpu::gelu_tanh_reference(double(x[i]));
    EXPECT_NEAR(double(y[i]), ref, 1e-6 + 1e-5 * std::fabs(ref)) << "x=" << x[i];
  }
}

TEST_P(EveryLoop, AxpyTwiceAddsTwice) {
  const std::size_t n = 1001;
  std::vector<float> x(n), y(n, 1.0f);
  gtb::fill_uniform(x.data(), n, 31, 0.5f, 1.5f);
  gtb::cpu::axpy(GetParam(), 0.5f, x.data(), y.data(), n);
  gtb::cpu::axpy(GetParam(), 0.5f, x.data(), y.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], 1.0 + double(x[i]), 1e-6) << i;
}

TEST_P(EveryLoop, NullArraysAreRejectedUnlessEmpty) {
  float v = 1.0f;
  EXPECT_THROW(gtb::cpu::axpy(GetParam(), kA, nullptr, &v, 1), std::invalid_argument);
  EXPECT_THROW(gtb::cpu::chain(GetParam(), kChain, &v, nullptr, 1), std::invalid_argument);
  EXPECT_NO_THROW(gtb::cpu::axpy(GetParam(), kA, nullptr, nullptr, 0));
  EXPECT_NO_THROW(gtb::cpu::chain(GetParam(), kChain, nullptr, nullptr, 0));
}

INSTANTIATE_TEST_SUITE_P(Vectorize, EveryLoop, ::testing::ValuesIn(kLoops),
                         [](const ::testing::TestParamInfo<Loop>& p) { return gtb::cpu::to_string(p.param); });

TEST(VectorizeMath, ExpApproxIsAccurateOverItsRange) {
  double worst = 0;
  for (int i = -8699; i <= 8699; ++i) {  // inside the clamp at +-87
    const float z = float(i) * 0.01f + 0.003f;
    const double ref = std::exp(double(z));
    worst = std::max(worst, std::fabs(double(gtb::exp_approx(z)) - ref) / ref);
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(VectorizeMath, ExpApproxClampsInsteadOfOverflowing) {
  EXPECT_TRUE(std::isfinite(gtb::exp_approx(1000.0f)));
  EXPECT_GT(gtb::exp_approx(1000.0f), 1e37f);
  EXPECT_GT(gtb::exp_approx(-1000.0f), 0.0f);
  EXPECT_LT(gtb::exp_approx(-1000.0f), 1e-37f);
}

TEST(VectorizeMath, GeluMatchesTanhForm) {
  for (int i = -1000; i <= 1000; ++i) {
    const float v = float(i) * 0.01f;
    const double ref = gtb::cpu::gelu_tanh_reference(double(v));
    ASSERT_NEAR(double(gtb::gelu_tanh(v)), ref, 1e-6 + 1e-6 * std::fabs(ref)) << "v=" << v;
  }
  EXPECT_EQ(gtb::gelu_tanh(0.0f), 0.0f);
}

TEST(VectorizeMath, ChainIsScaleThenBiasThenActivation) {
  const gtb::ChainParams p{2.0f, -0.5f};
  EXPECT_FLOAT_EQ(gtb::chain(1.25f, p), gtb::gelu_tanh(2.0f));
  EXPECT_FLOAT_EQ(gtb::chain_activation(gtb::chain_bias(gtb::chain_scale(0.5f, p), p)), gtb::gelu_tanh(0.5f));
}

TEST(VectorizeMath, ByteCountsFollowTheStreamRule) {
  EXPECT_EQ(gtb::kAxpyArrays, 3);
  EXPECT_EQ(gtb::kChainArrays, 2);
  EXPECT_EQ(gtb::kChainUnfusedArrays, 6);
}

// The bench relies on this instead of poisoning the in-place axpy output: with x in [0.5, 1.5] an
// element the update skipped is far outside the tolerance.
TEST(VectorizeCheck, SkippedAxpyElementFailsTheCheck) {
  const std::size_t n = 257;
  std::vector<float> x(n), y0(n);
  gtb::fill_uniform(x.data(), n, 41, 0.5f, 1.5f);
  gtb::fill_uniform(y0.data(), n, 42, -1.0f, 1.0f);
  std::vector<double> ref(n);
  gtb::cpu::axpy_reference(kA, x.data(), y0.data(), ref.data(), n);
  std::vector<float> y = y0;
  gtb::cpu::axpy(Loop::openmp, kA, x.data(), y.data(), n - 1);
  const auto rep = gtb::compare_elementwise(y.data(), ref.data(), n, gtb::kAxpyRtol, gtb::kAxpyAtol);
  EXPECT_FALSE(rep.ok);
  EXPECT_EQ(rep.first_bad, n - 1);
}

TEST(VectorizeLoops, NamesRoundTripAndBadNamesThrow) {
  for (Loop l : kLoops) EXPECT_EQ(gtb::cpu::loop_from_string(gtb::cpu::to_string(l)), l);
  EXPECT_THROW(gtb::cpu::loop_from_string("vec4"), std::invalid_argument);
}

TEST(VectorizeLoops, ParallelCopyCopiesAndThreadsAreCounted) {
  const std::size_t n = 10007;
  std::vector<float> a(n), b(n);
  gtb::fill_uniform(a.data(), n, 51);
  gtb::cpu::parallel_copy(b.data(), a.data(), n);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(gtb_test::follows_openmp_threads([] { return gtb::cpu::openmp_threads(); }));
}

}  // namespace
