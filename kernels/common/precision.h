// The arithmetic precisions the GEMM and train families measure, with the names their records use.
#pragma once

#include <string>

#include "kernels/common/names.h"

namespace gtb {

// A GEMM names its inputs and accumulator (fp16_fp16acc vs fp16_fp32acc). A training step's fp16
// and bf16 are mixed precision: 16-bit activations and weight copies, FP32 master weights, and GEMMs
// that accumulate in FP32 (gemm_precision()). tf32 is a compute mode: operands stay FP32.
enum class Precision { fp32, tf32, fp16_fp32acc, fp16_fp16acc, bf16_fp32acc, fp16, bf16 };

inline constexpr NameTable<Precision, 7> kPrecisionNames = {{{Precision::fp32, "fp32"},
                                                            {Precision::tf32, "tf32"},
                                                            {Precision::fp16_fp32acc, "fp16_fp32acc"},
                                                            {Precision::fp16_fp16acc, "fp16_fp16acc"},
                                                            {Precision::bf16_fp32acc, "bf16_fp32acc"},
                                                            {Precision::fp16, "fp16"},
                                                            {Precision::bf16, "bf16"}}};
static_assert(names_unique(kPrecisionNames), "a precision named twice");

inline const char* to_string(Precision p) { return name_of(kPrecisionNames, p); }
inline Precision precision_from_string(const std::string& s) { return parse_name(kPrecisionNames, s, "precision"); }

// What each family measures, in its option order.
inline constexpr Precision kGemmPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16_fp32acc,
                                                Precision::fp16_fp16acc, Precision::bf16_fp32acc};
inline constexpr Precision kTrainPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};

// The GEMM precision a training step at `p` runs its matrix products in.
constexpr Precision gemm_precision(Precision p) {
  return p == Precision::fp16 ? Precision::fp16_fp32acc : p == Precision::bf16 ? Precision::bf16_fp32acc : p;
}

}  // namespace gtb
