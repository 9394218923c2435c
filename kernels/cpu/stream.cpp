// CPU STREAM-like kernels: static OpenMP schedule, vectorized inner loops, non-temporal hints left to
// the compiler.
#include "kernels/cpu/stream.h"

#include <omp.h>

#include "kernels/common/random.h"
#include "kernels/common/stream.h"

namespace gtb::cpu {

void stream_init(float* a, float* b, float* c, std::size_t n, unsigned long long seed) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sn; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    a[i] = static_cast<float>(uniform01(seed, 3 * u) + 0.5);
    b[i] = static_cast<float>(uniform01(seed, 3 * u + 1) + 0.5);
    c[i] = static_cast<float>(uniform01(seed, 3 * u + 2) + 0.5);
  }
}

void stream_copy(float* __restrict a, const float* __restrict b, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) a[i] = b[i];
}

void stream_triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float scalar,
                  std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) a[i] = triad(b[i], c[i], scalar);
}

int stream_threads() { return omp_get_max_threads(); }

}  // namespace gtb::cpu
