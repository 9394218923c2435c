// CPU variants of the vectorize family: the same elementwise math kept scalar, compiler-vectorized
// on one core, and vectorized on all cores with OpenMP.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/common/names.h"
#include "kernels/vectorize/elementwise.h"

namespace gtb::cpu {

GTB_NAMED_ENUM(Loop, kLoopNames, scalar, autovec, openmp);
inline Loop loop_from_string(const std::string& name) {  // throws std::invalid_argument
  return parse_name(kLoopNames, name, "CPU loop");
}

// y = a*x + y and y = gelu(scale*x + bias) over n elements. Pointers may be unaligned; x and y must
// not overlap. Null pointers with n > 0 throw std::invalid_argument.
void axpy(Loop loop, float a, const float* x, float* y, std::size_t n);
void chain(Loop loop, ChainParams p, const float* x, float* y, std::size_t n);

// The individual loops, named so the static checks can find them in the object code. The scalar ones
// live in their own translation unit, compiled with vectorization disabled.
void axpy_scalar(float a, const float* x, float* y, std::size_t n);
void chain_scalar(ChainParams p, const float* x, float* y, std::size_t n);
void axpy_autovec(float a, const float* x, float* y, std::size_t n);
void chain_autovec(ChainParams p, const float* x, float* y, std::size_t n);
void axpy_openmp(float a, const float* x, float* y, std::size_t n);
void chain_openmp(ChainParams p, const float* x, float* y, std::size_t n);

// float64 references of the exact formulas (std::tanh, no approximation), OpenMP-parallel.
void axpy_reference(float a, const float* x, const float* y, double* out, std::size_t n);
void chain_reference(ChainParams p, const float* x, double* out, std::size_t n);
double gelu_tanh_reference(double v);

// dst = src with the OpenMP static schedule the openmp loops use, so pages are first touched by the
// threads that later stream them.
void parallel_copy(float* dst, const float* src, std::size_t n);
int openmp_threads();

}  // namespace gtb::cpu
