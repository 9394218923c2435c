// The arithmetic precisions the GEMM and train families measure, with the names their records use.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/common/names.h"

namespace gtb {

// A GEMM names its inputs and accumulator (fp16_fp16acc vs fp16_fp32acc). A training step's fp16
// and bf16 are mixed precision: 16-bit activations and weight copies, FP32 master weights, and GEMMs
// that accumulate in FP32 (gemm_precision()). tf32 is a compute mode: operands stay FP32.
GTB_NAMED_ENUM(Precision, kPrecisionNames, fp32, tf32, fp16_fp32acc, fp16_fp16acc, bf16_fp32acc, fp16, bf16);

inline Precision precision_from_string(const std::string& s) { return parse_name(kPrecisionNames, s, "precision"); }

// What each family measures, in its option order.
inline constexpr Precision kGemmPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16_fp32acc,
                                                Precision::fp16_fp16acc, Precision::bf16_fp32acc};
inline constexpr Precision kTrainPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};

// The GEMM precision a training step at `p` runs its matrix products in.
constexpr Precision gemm_precision(Precision p) {
  return p == Precision::fp16 ? Precision::fp16_fp32acc : p == Precision::bf16 ? Precision::bf16_fp32acc : p;
}

// ---- TF32 operands: what the tf32 tolerances are derived from ----
// A TF32 tensor core reads an FP32 operand with 10 of its 23 mantissa bits. Hopper may truncate the
// other 13 (toward zero: a relative error in (-2^-10, 0]) rather than round them to nearest
// (|error| <= 2^-11); the checks assume truncation. `nearest` rounds instead (the tests compare).
inline float tf32_operand(float x, bool nearest = false) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  if ((b & 0x7F800000u) == 0x7F800000u) return x;  // inf, NaN
  if (nearest) b += 0x1000u;
  b &= 0xFFFFE000u;
  float r;
  std::memcpy(&r, &b, sizeof r);
  return r;
}
// The relative bias a product of two truncated operands carries, taken per product by every tf32
// tolerance: each operand loses on average ln2 * 2^-11 of its value (mantissas spread log-uniformly),
// a product 2 ln2 * 2^-11 = 0.69 * 2^-10, always in the same direction, so a GEMM's sums do not
// average it away; 2^-10 bounds that mean. The worst single product loses up to 2 * 2^-10.
inline double tf32_product_bias() { return std::ldexp(1.0, -10); }
// The tf32 tolerance of one GEMM's output (the gemm family's relative Frobenius norm error, the
// train step's layer-local elementwise error relative to the sum of |terms|): the worst product's
// 2 * 2^-10, FP32 accumulation and output rounding (under 1e-5 at these sizes) added, times a margin
// of 2.5: 5 * 2^-10 = 4.9e-3. The truncated-operand model puts the measured error near 1e-3
// (tests/cpu/test_gemm.cpp).
inline double tf32_gemm_tolerance() { return 5.0 * tf32_product_bias(); }

}  // namespace gtb
