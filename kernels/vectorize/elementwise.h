// The vectorize family's elementwise math (axpy update, scale -> bias -> GELU chain), written once for
// the CPU and the GPU.
#pragma once

#include <cmath>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "kernels/common/hd.h"

namespace gtb {

// Bytes counted as STREAM does: each array element read plus each element written, per element of n.
inline constexpr int kAxpyArrays = 3;           // read x, read y, write y
inline constexpr int kChainArrays = 2;          // read x, write y
inline constexpr int kChainUnfusedArrays = 6;   // what three separate passes really move

// Float32 results against the float64 references: the axpy rounds once or twice; the chain's exp
// approximation and division stay within a few ulp.
inline constexpr double kAxpyRtol = 1e-6, kAxpyAtol = 1e-6;
inline constexpr double kChainRtol = 1e-5, kChainAtol = 1e-6;

struct ChainParams {
  float scale = 1.0f;
  float bias = 0.0f;
};

GTB_HD float axpy(float a, float x, float y) { return a * x + y; }

GTB_HD float float_from_bits(std::int32_t bits) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// exp(z) from a Cody-Waite range reduction and a degree-7 Taylor polynomial. Written out (no libm
// call) because g++ vectorizes no libm exp/tanh without -ffast-math, and the CPU variants must be
// able to vectorize the same math the GPU runs. Relative error stays near float rounding on the
// clamped range [-87, 87] (which keeps 2^n a normal float). The clamp keeps z's sign rather than
// using two constant bounds: with constants g++ duplicates the rest of the function for each bound,
// and that control flow keeps it from vectorizing the loop.
GTB_HD float exp_approx(float z) {
  z = std::fabs(z) < 87.0f ? z : std::copysign(87.0f, z);
  const float t = z * 1.44269504f;  // log2(e)
  // t + 127.5 > 0 on the clamped range, so truncation rounds t to nearest.
  const std::int32_t n = static_cast<std::int32_t>(t + 127.5f) - 127;
  const float nf = static_cast<float>(n);
  const float r = (z - nf * 0.693359375f) - nf * (-2.12194440e-4f);  // ln2 split so r stays accurate
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * float_from_bits((n + 127) << 23);
}

// GELU, tanh form: 0.5 v (1 + tanh(u)) rewritten as v / (1 + exp(-2u)), the same value with one exp.
GTB_HD float gelu_tanh(float v) {
  const float u = 0.7978845608f * (v + 0.044715f * v * v * v);  // sqrt(2/pi)
  return v / (1.0f + exp_approx(-2.0f * u));
}

// The chain's three stages; the fused form applies them in one pass, the unfused form one pass each.
GTB_HD float chain_scale(float x, ChainParams p) { return p.scale * x; }
GTB_HD float chain_bias(float v, ChainParams p) { return v + p.bias; }
GTB_HD float chain_activation(float v) { return gelu_tanh(v); }
GTB_HD float chain(float x, ChainParams p) { return chain_activation(chain_bias(chain_scale(x, p), p)); }

}  // namespace gtb
