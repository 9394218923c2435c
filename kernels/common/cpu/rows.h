// Row loops the CPU steps share, so that the elementwise pass after a GEMM is one vectorizable loop
// in every family.
#pragma once

#include <cstddef>

namespace gtb::cpu {

// Rows [r0, r1) of z (row length n): z += bias, and out = f(z) beside it. f is inlined into the simd
// loop, so the loop vectorizes wherever f does (an activation, with or without a BF16 rounding).
template <class F>
inline void bias_then_rows(float* __restrict z, float* __restrict out, const float* __restrict bias, std::size_t r0,
                           std::size_t r1, std::size_t n, F f) {
  for (std::size_t r = r0; r < r1; ++r) {
    float* __restrict zr = z + r * n;
    float* __restrict outr = out + r * n;
#pragma omp simd
    for (std::size_t j = 0; j < n; ++j) {
      const float v = zr[j] + bias[j];
      zr[j] = v;
      outr[j] = f(v);
    }
  }
}

}  // namespace gtb::cpu
