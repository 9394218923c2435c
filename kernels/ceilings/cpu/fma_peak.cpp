// FMA-throughput kernels per ISA, compiled for their targets and chosen at run time.
#include "kernels/ceilings/cpu/fma_peak.h"

#include <omp.h>

#include <cmath>
#include <stdexcept>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gtb::cpu {

namespace {

#if defined(__x86_64__)
// The chains live in registers: the loop body is kFmaChains independent FMAs, no loads or stores.
__attribute__((target("avx512f"))) void chains_avx512(float* s, std::int64_t iters, float mul, float add) {
  __m512 x[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) x[c] = _mm512_loadu_ps(s + 16 * c);
  const __m512 m = _mm512_set1_ps(mul), a = _mm512_set1_ps(add);
  for (std::int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kFmaChains; ++c) x[c] = _mm512_fmadd_ps(x[c], m, a);
  for (int c = 0; c < kFmaChains; ++c) _mm512_storeu_ps(s + 16 * c, x[c]);
}

__attribute__((target("avx2,fma"))) void chains_avx2(float* s, std::int64_t iters, float mul, float add) {
  __m256 x[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) x[c] = _mm256_loadu_ps(s + 8 * c);
  const __m256 m = _mm256_set1_ps(mul), a = _mm256_set1_ps(add);
  for (std::int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kFmaChains; ++c) x[c] = _mm256_fmadd_ps(x[c], m, a);
  for (int c = 0; c < kFmaChains; ++c) _mm256_storeu_ps(s + 8 * c, x[c]);
}

void chains_sse(float* s, std::int64_t iters, float mul, float add) {
  __m128 x[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) x[c] = _mm_loadu_ps(s + 4 * c);
  const __m128 m = _mm_set1_ps(mul), a = _mm_set1_ps(add);
  for (std::int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kFmaChains; ++c) x[c] = _mm_add_ps(_mm_mul_ps(x[c], m), a);
  for (int c = 0; c < kFmaChains; ++c) _mm_storeu_ps(s + 4 * c, x[c]);
}
#endif

}  // namespace

bool fma_isa_supported(FmaIsa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case FmaIsa::avx512: return __builtin_cpu_supports("avx512f");
    case FmaIsa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case FmaIsa::baseline: return true;
  }
#endif
  (void)isa;
  return false;
}

int fma_lanes(FmaIsa isa) { return isa == FmaIsa::avx512 ? 16 : isa == FmaIsa::avx2 ? 8 : 4; }

double fma_peak_run(FmaIsa isa, float* state, int threads, std::int64_t iters, float mul, float add) {
  if (!fma_isa_supported(isa)) throw std::invalid_argument("fma_peak_run: this CPU does not run that ISA");
  if (threads <= 0 || iters < 0) throw std::invalid_argument("fma_peak_run: threads > 0 and iters >= 0");
#if defined(__x86_64__)
  const std::size_t per = std::size_t(kFmaChains) * std::size_t(fma_lanes(isa));
#pragma omp parallel num_threads(threads)
  {
    float* s = state + per * std::size_t(omp_get_thread_num());
    if (isa == FmaIsa::avx512)
      chains_avx512(s, iters, mul, add);
    else if (isa == FmaIsa::avx2)
      chains_avx2(s, iters, mul, add);
    else
      chains_sse(s, iters, mul, add);
  }
  return 2.0 * double(per) * double(threads) * double(iters);
#else
  (void)state, (void)mul, (void)add;
  return 0;
#endif
}

void fma_peak_reference(FmaIsa isa, float* state, std::size_t count, std::int64_t iters, float mul, float add) {
  for (std::size_t i = 0; i < count; ++i) {
    float x = state[i];
    for (std::int64_t t = 0; t < iters; ++t) {
      if (isa == FmaIsa::baseline) {
        volatile float p = x * mul;  // rounded on its own, as the SSE multiply does
        x = p + add;
      } else {
        x = std::fma(x, mul, add);
      }
    }
    state[i] = x;
  }
}

}  // namespace gtb::cpu
