// Host random fills: counter-based, so OpenMP threads produce the same data as one thread would.
#include "kernels/common/random.h"

#include <cmath>
#include <cstring>

namespace gtb {

namespace {
constexpr double kTwoPi = 6.283185307179586476925286766559;

template <class T>
void uniform_impl(T* x, std::size_t n, std::uint64_t seed, T lo, T hi) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sn; ++i) x[i] = static_cast<T>(lo + (hi - lo) * uniform01(seed, std::uint64_t(i)));
}

template <class T>
void normal_impl(T* x, std::size_t n, std::uint64_t seed, T sigma) {
  // Box-Muller: pair p of counter-based uniforms gives elements 2p and 2p+1 (the cosine and the
  // sine), computed in T's precision, so one logarithm and one sine-cosine make two values.
  const auto pairs = static_cast<long long>((n + 1) / 2);
  const T two_pi = static_cast<T>(kTwoPi);
#pragma omp parallel for schedule(static)
  for (long long p = 0; p < pairs; ++p) {
    const auto u = static_cast<std::uint64_t>(p);
    // uniform01 is in (0, 1); rounded to float it can be 1 (r = 0), never 0.
    const T r = std::sqrt(T(-2) * std::log(static_cast<T>(uniform01(seed, 2 * u))));
    const T t = two_pi * static_cast<T>(uniform01(seed ^ 0x5bd1e995ULL, 2 * u + 1));
    const std::size_t i = 2 * static_cast<std::size_t>(p);
    x[i] = sigma * r * std::cos(t);
    if (i + 1 < n) x[i + 1] = sigma * r * std::sin(t);
  }
}
}  // namespace

void fill_uniform(float* x, std::size_t n, std::uint64_t seed, float lo, float hi) { uniform_impl(x, n, seed, lo, hi); }
void fill_uniform(double* x, std::size_t n, std::uint64_t seed, double lo, double hi) {
  uniform_impl(x, n, seed, lo, hi);
}
void fill_normal(float* x, std::size_t n, std::uint64_t seed, float sigma) { normal_impl(x, n, seed, sigma); }
void fill_normal(double* x, std::size_t n, std::uint64_t seed, double sigma) { normal_impl(x, n, seed, sigma); }

void fill_bytes(void* p, std::size_t bytes, std::uint64_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  const std::size_t words = bytes / 8;
  const auto sw = static_cast<long long>(words);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sw; ++i) {
    const std::uint64_t v = mix64(seed * 0x9E3779B97F4A7C15ULL + std::uint64_t(i));
    std::memcpy(b + std::size_t(i) * 8, &v, 8);
  }
  for (std::size_t i = words * 8; i < bytes; ++i)
    b[i] = static_cast<unsigned char>(mix64(seed ^ std::uint64_t(i)) | 1u);
}

}  // namespace gtb
