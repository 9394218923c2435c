// The host stand-in's bfloat16 (see cuda_runtime_api.h in this folder): the bits, rounded to nearest
// even as __float2bfloat16_rn does.
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda_runtime_api.h"

struct __nv_bfloat16 {
  std::uint16_t x;
};
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return {std::uint16_t((b >> 16) | 0x0040u)};  // quiet NaN
  b += 0x7FFFu + ((b >> 16) & 1u);
  return {std::uint16_t(b >> 16)};
}
inline float __bfloat162float(__nv_bfloat16 h) {
  const std::uint32_t b = std::uint32_t(h.x) << 16;
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
