// CPU loops of the vectorize family: compiler-vectorized single thread, OpenMP on all cores, the
// float64 references, and the dispatch by variant name.
#include "kernels/vectorize/cpu/vectorize.h"

#include <cmath>
#include <stdexcept>

#include <omp.h>

#include "kernels/common/cpu/clones.h"

namespace gtb::cpu {

// The project builds for the generic x86-64 target (SSE2); these loops are also compiled for AVX2
// and AVX-512 and picked at run time, as a framework's CPU kernels are.

// __restrict tells the compiler x and y do not overlap, so it vectorizes without a runtime alias
// check falling back to the scalar loop.
GTB_CPU_CLONES void axpy_autovec(float a, const float* __restrict x, float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = gtb::axpy(a, x[i], y[i]);
}

GTB_CPU_CLONES void chain_autovec(ChainParams p, const float* __restrict x, float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = gtb::chain(x[i], p);
}

GTB_CPU_CLONES void axpy_openmp(float a, const float* __restrict x, float* __restrict y, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) y[i] = gtb::axpy(a, x[i], y[i]);
}

GTB_CPU_CLONES void chain_openmp(ChainParams p, const float* __restrict x, float* __restrict y, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) y[i] = gtb::chain(x[i], p);
}

namespace {
// A kernel's three loops over x and y, each taking its parameter (a, or the chain's) first.
template <class P>
using LoopFn = void (*)(P, const float*, float*, std::size_t);

// Runs the loop `loop` names after checking the arrays.
template <class P>
void run_loop(Loop loop, LoopFn<P> scalar, LoopFn<P> autovec, LoopFn<P> openmp, P p, const float* x, float* y,
              std::size_t n) {
  if (n > 0 && (x == nullptr || y == nullptr)) throw std::invalid_argument("vectorize: null array with n > 0");
  switch (loop) {
    case Loop::scalar: return scalar(p, x, y, n);
    case Loop::autovec: return autovec(p, x, y, n);
    case Loop::openmp: return openmp(p, x, y, n);
  }
  throw std::invalid_argument("vectorize: bad CPU loop");
}
}  // namespace

void axpy(Loop loop, float a, const float* x, float* y, std::size_t n) {
  run_loop<float>(loop, axpy_scalar, axpy_autovec, axpy_openmp, a, x, y, n);
}

void chain(Loop loop, ChainParams p, const float* x, float* y, std::size_t n) {
  run_loop<ChainParams>(loop, chain_scalar, chain_autovec, chain_openmp, p, x, y, n);
}

double gelu_tanh_reference(double v) {
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
}

void axpy_reference(float a, const float* x, const float* y, double* out, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sn; ++i) out[i] = double(a) * double(x[i]) + double(y[i]);
}

void chain_reference(ChainParams p, const float* x, double* out, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < sn; ++i) out[i] = gelu_tanh_reference(double(p.scale) * double(x[i]) + double(p.bias));
}

void parallel_copy(float* dst, const float* src, std::size_t n) {
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for simd schedule(static)
  for (long long i = 0; i < sn; ++i) dst[i] = src[i];
}

int openmp_threads() { return omp_get_max_threads(); }

}  // namespace gtb::cpu
