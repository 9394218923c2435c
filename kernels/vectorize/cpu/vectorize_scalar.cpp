// The scalar CPU loops: this file is compiled with vectorization disabled (see bench/vectorize/vectorize.cmake),
// and ci/static-checks.sh checks in the object code that no packed instruction slipped in.
#include "kernels/vectorize/cpu/vectorize.h"

namespace gtb::cpu {

void axpy_scalar(float a, const float* x, float* y, std::size_t n) {
#if defined(__clang__)
#pragma clang loop vectorize(disable) interleave(disable)
#endif
  for (std::size_t i = 0; i < n; ++i) y[i] = gtb::axpy(a, x[i], y[i]);
}

void chain_scalar(ChainParams p, const float* x, float* y, std::size_t n) {
#if defined(__clang__)
#pragma clang loop vectorize(disable) interleave(disable)
#endif
  for (std::size_t i = 0; i < n; ++i) y[i] = gtb::chain(x[i], p);
}

}  // namespace gtb::cpu
