// The host stand-in's IEEE half (see cuda_runtime_api.h in this folder): the bits, rounded to nearest
// even as __float2half_rn does (gtb's conversion, kernels/gemm/gemm.h, is the reference one).
#pragma once

#include <cstdint>

#include "cuda_runtime_api.h"
#include "kernels/gemm/gemm.h"

struct __half {
  std::uint16_t x;
};
inline __half __float2half_rn(float f) { return {gtb::gemm::float_to_half(f)}; }
inline float __half2float(__half h) { return gtb::gemm::half_to_float(h.x); }
