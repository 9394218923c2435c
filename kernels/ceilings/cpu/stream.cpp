// CPU STREAM-like kernels: all OpenMP threads over fixed per-thread ranges, plain or non-temporal
// stores at the widest vector width the CPU has (chosen at run time).
#include "kernels/ceilings/cpu/stream.h"

#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/ceilings/stream.h"
#include "kernels/common/random.h"

namespace gtb::cpu {

AlignedFloats alloc_floats(std::size_t n) {
  if (n > ~std::size_t(0) / sizeof(float)) throw std::bad_alloc();
  return AlignedFloats(n ? n * sizeof(float) : sizeof(float), std::size_t(64));
}

namespace {

constexpr std::size_t kLine = 16;  // floats per 64-byte cache line

// Thread t of T takes a contiguous range whose bounds are whole cache lines from the start.
void thread_range(std::size_t n, int t, int nt, std::size_t& lo, std::size_t& hi) {
  const std::size_t lines = (n + kLine - 1) / kLine;
  const std::size_t per = (lines + std::size_t(nt) - 1) / std::size_t(nt);
  lo = std::min(n, std::size_t(t) * per * kLine);
  hi = std::min(n, lo + per * kLine);
}

template <class Fn>
void for_thread_ranges(std::size_t n, Fn fn) {
#pragma omp parallel
  {
    std::size_t lo, hi;
    thread_range(n, omp_get_thread_num(), omp_get_num_threads(), lo, hi);
    if (lo < hi) fn(lo, hi);
  }
}

// Plain loops, cloned per ISA (the resolver picks one when the program loads).
__attribute__((target_clones("avx512f", "avx2", "default"))) void copy_plain(float* __restrict a,
                                                                           const float* __restrict b, std::size_t lo,
                                                                           std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) a[i] = b[i];
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void triad_plain(float* __restrict a,
                                                                            const float* __restrict b,
                                                                            const float* __restrict c, float s,
                                                                            std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) a[i] = triad(b[i], c[i], s);
}

#if defined(__x86_64__)
// Non-temporal stores need an aligned destination: the scalar head and tail go around [v0, v1).
template <std::size_t W>
void split(const float* a, std::size_t lo, std::size_t hi, std::size_t& v0, std::size_t& v1) {
  v0 = lo;
  while (v0 < hi && reinterpret_cast<std::uintptr_t>(a + v0) % (W * sizeof(float))) ++v0;
  v1 = v0 + (hi - v0) / W * W;
}

__attribute__((target("avx512f"))) void copy_nt512(float* a, const float* b, std::size_t v0, std::size_t v1) {
  for (std::size_t i = v0; i < v1; i += 16) _mm512_stream_ps(a + i, _mm512_loadu_ps(b + i));
}
__attribute__((target("avx"))) void copy_nt256(float* a, const float* b, std::size_t v0, std::size_t v1) {
  for (std::size_t i = v0; i < v1; i += 8) _mm256_stream_ps(a + i, _mm256_loadu_ps(b + i));
}
void copy_nt128(float* a, const float* b, std::size_t v0, std::size_t v1) {
  for (std::size_t i = v0; i < v1; i += 4) _mm_stream_ps(a + i, _mm_loadu_ps(b + i));
}
__attribute__((target("avx512f"))) void triad_nt512(float* a, const float* b, const float* c, float s,
                                                    std::size_t v0, std::size_t v1) {
  const __m512 vs = _mm512_set1_ps(s);
  for (std::size_t i = v0; i < v1; i += 16)
    _mm512_stream_ps(a + i, _mm512_add_ps(_mm512_loadu_ps(b + i), _mm512_mul_ps(vs, _mm512_loadu_ps(c + i))));
}
__attribute__((target("avx"))) void triad_nt256(float* a, const float* b, const float* c, float s, std::size_t v0,
                                                std::size_t v1) {
  const __m256 vs = _mm256_set1_ps(s);
  for (std::size_t i = v0; i < v1; i += 8)
    _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_mul_ps(vs, _mm256_loadu_ps(c + i))));
}
void triad_nt128(float* a, const float* b, const float* c, float s, std::size_t v0, std::size_t v1) {
  const __m128 vs = _mm_set1_ps(s);
  for (std::size_t i = v0; i < v1; i += 4)
    _mm_stream_ps(a + i, _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(vs, _mm_loadu_ps(c + i))));
}

int nt_width() {
  static const int w = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx") ? 8 : 4;
  return w;
}

// One thread's range with non-temporal stores: head and tail plain, the aligned middle streamed.
template <class Vec, class Plain>
void nt_range(float* a, std::size_t lo, std::size_t hi, Vec vec, Plain plain) {
  std::size_t v0, v1;
  const int w = nt_width();
  if (w == 16)
    split<16>(a, lo, hi, v0, v1);
  else if (w == 8)
    split<8>(a, lo, hi, v0, v1);
  else
    split<4>(a, lo, hi, v0, v1);
  plain(lo, v0);
  vec(w, v0, v1);
  plain(v1, hi);
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before returning
}
#endif

}  // namespace

void stream_init(float* a, float* b, float* c, std::size_t n, unsigned long long seed) {
  for_thread_ranges(n, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const auto u = static_cast<std::uint64_t>(i);
      a[i] = static_cast<float>(uniform01(seed, 3 * u) + 0.5);
      b[i] = static_cast<float>(uniform01(seed, 3 * u + 1) + 0.5);
      c[i] = static_cast<float>(uniform01(seed, 3 * u + 2) + 0.5);
    }
  });
}

namespace {

// Runs one kernel over every thread's range: `vec(width, v0, v1)` streams the aligned middle of a
// range with non-temporal stores, `plain(i0, i1)` does everything else (all of it for plain stores).
template <class Vec, class Plain>
void run_stores(float* a, std::size_t n, Stores stores, Vec vec, Plain plain) {
#if defined(__x86_64__)
  if (stores == Stores::nontemporal) {
    for_thread_ranges(n, [&](std::size_t lo, std::size_t hi) { nt_range(a, lo, hi, vec, plain); });
    return;
  }
#else
  (void)stores, (void)vec;
#endif
  for_thread_ranges(n, plain);
}

}  // namespace

void stream_copy(float* __restrict a, const float* __restrict b, std::size_t n, Stores stores) {
  run_stores(
      a, n, stores,
      [&](int w, std::size_t v0, std::size_t v1) {
#if defined(__x86_64__)
        (w == 16 ? copy_nt512 : w == 8 ? copy_nt256 : copy_nt128)(a, b, v0, v1);
#else
        (void)w, (void)v0, (void)v1;
#endif
      },
      [&](std::size_t i0, std::size_t i1) { copy_plain(a, b, i0, i1); });
}

void stream_triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float scalar,
                  std::size_t n, Stores stores) {
  run_stores(
      a, n, stores,
      [&](int w, std::size_t v0, std::size_t v1) {
#if defined(__x86_64__)
        (w == 16 ? triad_nt512 : w == 8 ? triad_nt256 : triad_nt128)(a, b, c, scalar, v0, v1);
#else
        (void)w, (void)v0, (void)v1;
#endif
      },
      [&](std::size_t i0, std::size_t i1) { triad_plain(a, b, c, scalar, i0, i1); });
}

int stream_threads() { return omp_get_max_threads(); }

}  // namespace gtb::cpu
