// A stand-alone OpenMP triad with 64-byte-aligned arrays and AVX-512/AVX non-temporal stores: the
// yardstick gtb's host triad ceiling is held to (run by hand, never timed in CI).
// usage: triad_nt [MiB per array (default 256)] [repetitions (default 20)]; prints the median and
// the best GB/s.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__attribute__((target("avx512f"))) static void triad512(float* a, const float* b, const float* c, long lo, long hi) {
  const __m512 s = _mm512_set1_ps(3.0f);
  for (long i = lo; i < hi; i += 16)
    _mm512_stream_ps(a + i, _mm512_fmadd_ps(s, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
}
__attribute__((target("avx,fma"))) static void triad256(float* a, const float* b, const float* c, long lo, long hi) {
  const __m256 s = _mm256_set1_ps(3.0f);
  for (long i = lo; i < hi; i += 8)
    _mm256_stream_ps(a + i, _mm256_fmadd_ps(s, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
}

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::atol(argv[1]) : 256;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  if (mib <= 0 || reps <= 0) {
    std::fprintf(stderr, "usage: triad_nt [MiB per array > 0] [repetitions > 0]\n");
    return 2;
  }
  const bool wide = __builtin_cpu_supports("avx512f");
  if (!wide && !(__builtin_cpu_supports("avx") && __builtin_cpu_supports("fma")))
    return std::fprintf(stderr, "needs AVX+FMA\n"), 77;
  const long n = mib * (1l << 20) / 4;  // a multiple of 16 floats
  auto* a = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  auto* b = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  auto* c = static_cast<float*>(std::aligned_alloc(64, std::size_t(n) * 4));
  if (!a || !b || !c) return std::fprintf(stderr, "out of memory\n"), 1;
  auto range = [n](long& lo, long& hi) {  // whole cache lines per thread; first touch = use
    const long per = (n / 16 + omp_get_num_threads() - 1) / omp_get_num_threads() * 16;
    lo = omp_get_thread_num() * per < n ? omp_get_thread_num() * per : n;
    hi = lo + per < n ? lo + per : n;
  };
#pragma omp parallel
  {
    long lo, hi;
    range(lo, hi);
    for (long i = lo; i < hi; ++i) a[i] = 0.0f, b[i] = 1.0f + float(i % 7), c[i] = 0.5f + float(i % 5);
  }
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
    {
      long lo, hi;
      range(lo, hi);
      (wide ? triad512 : triad256)(a, b, c, lo, hi);
      _mm_sfence();
    }
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  for (long i = 0; i < n; i += 4099)  // the check: b + 3c exactly (small integers and halves)
    if (a[i] != b[i] + 3.0f * c[i]) return std::fprintf(stderr, "wrong result at %ld\n", i), 1;
  const double bytes = 3.0 * double(n) * 4;  // 3 x array bytes
  std::printf("triad_nt: %d threads, %ld MiB per array, %d samples: median %.2f GB/s, best %.2f GB/s\n",
              omp_get_max_threads(), mib, reps, bytes / times[times.size() / 2] / 1e9, bytes / times.front() / 1e9);
  std::free(a), std::free(b), std::free(c);
  return 0;
}
