// Work split over OpenMP threads, one definition for the CPU training steps: contiguous row ranges
// per thread, and a GEMM cut into one single-threaded library call per thread.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/native_step.h"

namespace gtb::cpu {

// Below this much work (the caller's units) a pass runs on one thread (kernels/common/native_step.h).
inline constexpr double kMinParallelWork = native::kMinParallelWork;
// Below this many multiply-adds a GEMM is one library call: slicing it costs more than it saves.
inline constexpr double kMinSplitGemmFlops = 4.0e6;

// While it lives, with `on`, every OpenMP region of the calling thread runs on one thread
// (omp_set_num_threads(1)); the count before is restored at the end.
class OneThreadScope {
 public:
  explicit OneThreadScope(bool on) : saved_(omp_get_max_threads()), on_(on) {
    if (on_) omp_set_num_threads(1);
  }
  ~OneThreadScope() {
    if (on_) omp_set_num_threads(saved_);
  }
  OneThreadScope(const OneThreadScope&) = delete;
  OneThreadScope& operator=(const OneThreadScope&) = delete;

 private:
  int saved_;
  bool on_;
};

// Splits [0, n) into one contiguous range per thread (one thread below kMinParallelWork) and calls
// fn(begin, end, thread).
template <class Fn>
void parallel_ranges(std::size_t n, double work, Fn fn) {
  const int parts = work > kMinParallelWork ? omp_get_max_threads() : 1;
  if (parts == 1) {
    fn(std::size_t(0), n, 0);
    return;
  }
#pragma omp parallel num_threads(parts)
  {
    const int t = omp_get_thread_num();
    const std::size_t b = n * std::size_t(t) / std::size_t(parts), e = n * std::size_t(t + 1) / std::size_t(parts);
    if (e > b) fn(b, e, t);
  }
}

// C = op(A) op(B) (+ beta C), row-major, cut into one slice per thread of the longer of m and n (n in
// 16-column units, one cache line), each slice one call leaf(m, n, a, b, c) with the slice's sizes and
// pointers (strides and transposes are the caller's). `whole` (or a small product, or one thread)
// makes it a single call: one fork per product, no library thread pool beside OpenMP's.
template <class Leaf>
void split_gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                int ldc, bool whole, Leaf leaf) {
  const int nt = omp_get_max_threads();
  if (whole || nt == 1 || double(m) * double(n) * double(k) < kMinSplitGemmFlops) {
    leaf(m, n, a, b, c);
    return;
  }
  const bool split_m = m >= n;
  const int len = split_m ? m : n;
  const int grain = split_m ? 1 : 16;
  const int parts = std::max(1, std::min(nt, len / grain));
#pragma omp parallel num_threads(parts)
  {
    const int t = omp_get_thread_num();
    const int units = (len + grain - 1) / grain;
    const int u0 = int(std::int64_t(units) * t / parts), u1 = int(std::int64_t(units) * (t + 1) / parts);
    const int i0 = std::min(len, u0 * grain), i1 = std::min(len, u1 * grain);
    if (i1 > i0) {
      if (split_m) {
        const float* as = ta ? a + i0 : a + std::size_t(i0) * std::size_t(lda);
        leaf(i1 - i0, n, as, b, c + std::size_t(i0) * std::size_t(ldc));
      } else {
        const float* bs = tb ? b + std::size_t(i0) * std::size_t(ldb) : b + i0;
        leaf(m, i1 - i0, a, bs, c + i0);
      }
    }
  }
}

}  // namespace gtb::cpu
