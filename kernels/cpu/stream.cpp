// CPU STREAM-like kernels: all OpenMP threads, static schedule, vectorized, with non-temporal stores
// for the written array. Without them every store first reads its cache line (write-allocate), so
// a copy moves 3 bytes for every 2 it counts and the "ceiling" would sit below what an ordinary
// read-modify-write loop such as axpy reaches.
#include "kernels/cpu/stream.h"

#include <omp.h>

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

namespace {

// Streaming stores pay off only for arrays far larger than the caches.
constexpr std::size_t kStreamingMin = std::size_t(1) << 20;

// Runs body(i0, i1) over [0, n) split into per-thread ranges whose inner bounds are multiples of 4
// elements counted from the first 16-byte-aligned element of `out`; the unaligned head and the tail
// are done with scalar code by the first and last thread.
template <class Vec4, class Scalar>
void for_streaming(float* out, std::size_t n, Vec4 vec4, Scalar scalar) {
  const std::size_t head = ((16 - reinterpret_cast<std::uintptr_t>(out) % 16) % 16) / sizeof(float);
  const std::size_t h = head < n ? head : n;
  const std::size_t quads = (n - h) / 4;
  const auto sq = static_cast<long long>(quads);
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (long long q = 0; q < sq; ++q) vec4(h + std::size_t(q) * 4);
#pragma omp single nowait
    {
      for (std::size_t i = 0; i < h; ++i) scalar(i);
      for (std::size_t i = h + quads * 4; i < n; ++i) scalar(i);
    }
#if defined(__SSE2__)
    _mm_sfence();  // streaming stores are weakly ordered: make them visible before returning
#endif
  }
}

}  // namespace

void stream_copy(float* __restrict a, const float* __restrict b, std::size_t n) {
#if defined(__SSE2__)
  if (n >= kStreamingMin) {
    for_streaming(
        a, n, [&](std::size_t i) { _mm_stream_ps(a + i, _mm_loadu_ps(b + i)); }, [&](std::size_t i) { a[i] = b[i]; });
    return;
  }
#endif
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) a[i] = b[i];
}

void stream_triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float scalar,
                  std::size_t n) {
#if defined(__SSE2__)
  if (n >= kStreamingMin) {
    const __m128 s = _mm_set1_ps(scalar);
    for_streaming(
        a, n,
        [&](std::size_t i) { _mm_stream_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(s, _mm_loadu_ps(c + i)))); },
        [&](std::size_t i) { a[i] = triad(b[i], c[i], scalar); });
    return;
  }
#endif
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) a[i] = triad(b[i], c[i], scalar);
}

int stream_threads() { return omp_get_max_threads(); }

}  // namespace gtb::cpu
