// GEMM arithmetic shared by the CPU and GPU sides: precisions, FLOPs, operand bytes, tolerances,
// half/bfloat16 rounding, tile and wave estimates and the datasheet peak table.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/precision.h"

namespace gtb::gemm {

using gtb::Precision;
using gtb::precision_from_string;
using gtb::to_string;

// The GEMM precisions (kGemmPrecisions) and their option names.
inline const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> all(std::begin(kGemmPrecisions), std::end(kGemmPrecisions));
  return all;
}
inline std::vector<std::string> precision_names() { return names_of(kPrecisionNames, kGemmPrecisions); }

// Storage bytes of one element of A and B, and of C. TF32 is a compute mode: operands stay FP32.
inline int input_bytes(Precision p) { return (p == Precision::fp32 || p == Precision::tf32) ? 4 : 2; }
inline int output_bytes(Precision p) { return input_bytes(p); }

// Multiply-adds count twice: C = A[m x k] * B[k x n] is 2*m*n*k floating-point operations.
inline double flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * double(m) * double(n) * double(k);
}

// Bytes of A, B and C in the precision's storage type: the memory a layer's GEMM holds.
inline double operand_bytes(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) {
  return double(input_bytes(p)) * (double(m) * double(k) + double(k) * double(n)) +
         double(output_bytes(p)) * double(m) * double(n);
}

// Unit roundoff of the format the inputs are rounded to (2^-24 FP32, 2^-11 TF32 and FP16, 2^-8 BF16).
inline double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::fp32: return std::ldexp(1.0, -24);
    case Precision::tf32:
    case Precision::fp16_fp32acc:
    case Precision::fp16_fp16acc:
    case Precision::fp16: return std::ldexp(1.0, -11);
    case Precision::bf16_fp32acc:
    case Precision::bf16: return std::ldexp(1.0, -8);
  }
  return 1.0;
}

// Tolerance on ||C - C_ref||_F / ||C_ref||_F against a float64 reference computed from the FP32
// inputs (so input rounding counts as part of the precision's cost). For random normal inputs the
// expected error of a format with unit roundoff u is about u (inputs) plus u/sqrt(3) (a rounded
// output): ~6e-4 for FP16 and ~5e-3 for BF16 (TF32 operands may be truncated rather than rounded:
// tf32_gemm_tolerance() in precision.h), so the bounds below sit ~10x above it while a
// wrong result (error ~1) is far beyond. FP16 accumulation adds rounding at every partial sum, whose
// error grows like u*sqrt(k/2): the bound scales with sqrt(k) there.
inline double tolerance(Precision p, std::int64_t k) {
  switch (p) {
    case Precision::fp32: return 1e-5;
    case Precision::tf32: return tf32_gemm_tolerance();  // truncated operands (precision.h)
    case Precision::fp16_fp32acc:
    case Precision::fp16: return 5e-3;
    case Precision::bf16_fp32acc:
    case Precision::bf16: return 3e-2;
    case Precision::fp16_fp16acc: {
      const double grow = std::ldexp(1.0, -11) * std::sqrt(double(k > 0 ? k : 1));
      return grow > 1e-2 ? grow : 1e-2;
    }
  }
  return 0;
}

// ---- IEEE half and bfloat16, round to nearest even (what cuBLAS and oneDNN expect as input). ----

inline std::uint32_t float_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
inline float bits_float(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}
inline float bf16_to_float(std::uint16_t h) { return bits_float(std::uint32_t(h) << 16); }

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return static_cast<std::uint16_t>(sign | (ax > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {                                                    // half subnormal or zero
    if (ax <= 0x33000000u) return static_cast<std::uint16_t>(sign);          // <= 2^-25: ties to 0
    const std::uint32_t e = ax >> 23;
    const std::uint32_t mant = (ax & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - e;
    std::uint32_t r = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3FFu);
  const std::uint32_t rem = ax & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is correct
  return static_cast<std::uint16_t>(sign | h);
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1Fu;
  const std::uint32_t m = h & 0x3FFu;
  if (e == 0) {
    const float v = float(m) * (1.0f / 16777216.0f);  // m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

// ---- Tile and wave estimates -----------------------------------------------------------------

// The CTA tile assumed for the estimate: 128x256 for tensor-core kernels (the widest Hopper/Ampere
// cuBLAS/CUTLASS tiles for 16-bit and TF32 GEMMs), 128x128 for FP32 SIMT kernels. It is an estimate;
// the cuBLASLt records carry the tile the library actually chose.
struct Tile {
  int m = 128, n = 128;
};
inline Tile documented_tile(Precision p) { return p == Precision::fp32 ? Tile{128, 128} : Tile{128, 256}; }

struct TileEstimate {
  std::int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  std::int64_t waves = 0;        // ceil(tiles / (sms * ctas_per_sm))
  double wave_efficiency = 0;    // tiles / (waves * sms * ctas_per_sm): idle share of the last wave
  double tile_efficiency = 0;    // m*n / (tiles * tile area): padding share of the edge tiles
};

// One output tile per CTA, `ctas_per_sm` resident CTAs per SM (1 for the large tensor-core tiles).
inline TileEstimate estimate_tiles(std::int64_t m, std::int64_t n, Tile t, int sms, int ctas_per_sm = 1) {
  if (m <= 0 || n <= 0 || t.m <= 0 || t.n <= 0 || sms <= 0 || ctas_per_sm <= 0)
    throw std::invalid_argument("estimate_tiles: sizes, tile, SM count and CTAs per SM must be positive");
  TileEstimate e;
  e.tiles_m = (m + t.m - 1) / t.m;
  e.tiles_n = (n + t.n - 1) / t.n;
  e.tiles = e.tiles_m * e.tiles_n;
  const std::int64_t slots = std::int64_t(sms) * ctas_per_sm;
  e.waves = (e.tiles + slots - 1) / slots;
  e.wave_efficiency = double(e.tiles) / double(e.waves * slots);
  e.tile_efficiency = double(m) * double(n) / (double(e.tiles) * double(t.m) * double(t.n));
  return e;
}

// ---- Datasheet peaks ---------------------------------------------------------------------------

// Dense (no structured sparsity) tensor/vector peaks in TFLOP/s from NVIDIA's datasheets: the
// datasheets print FP16/BF16/TF32 "with sparsity", the dense figure is half of it. FP16 with FP16
// accumulation runs at the FP16 rate on these data-center parts. Sources:
//   H100 SXM / PCIe / NVL: NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100)
//   H200 SXM / NVL: NVIDIA H200 datasheet (nvidia.com/en-us/data-center/h200)
//   A100 (SXM and PCIe, 40/80 GB): NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100)
//   L4: NVIDIA L4 datasheet (nvidia.com/en-us/data-center/l4)
struct Peak {
  const char* gpu;
  double fp32, tf32, fp16, bf16;
  const char* source;
};

inline const std::vector<Peak>& datasheet_peaks() {
  static const std::vector<Peak> table = {
      {"H200 NVL", 60, 417.5, 835.5, 835.5, "NVIDIA H200 datasheet"},
      {"H200", 67, 494.5, 989.5, 989.5, "NVIDIA H200 datasheet (SXM)"},
      {"H100 NVL", 60, 417.5, 835.5, 835.5, "NVIDIA H100 datasheet"},
      {"H100 PCIe", 51, 378, 756.5, 756.5, "NVIDIA H100 datasheet"},
      {"H100", 67, 494.5, 989.5, 989.5, "NVIDIA H100 datasheet (SXM)"},
      {"A100", 19.5, 156, 312, 312, "NVIDIA A100 datasheet"},
      {"L4", 30.3, 60, 121, 121, "NVIDIA L4 datasheet"},
  };
  return table;
}

inline std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

// Whole-word match of each of the entry's words in the device name ("NVIDIA H100 PCIe" matches
// "H100 PCIe", "NVIDIA L40S" does not match "L4"). The first match in table order wins, so the
// specific entries come before the generic ones.
inline std::optional<Peak> find_peak(const std::string& device_name) {
  auto words = [](const std::string& s) {
    std::vector<std::string> w;
    std::string cur;
    for (char c : upper(s)) {
      if (c == ' ' || c == '-' || c == '_') {
        if (!cur.empty()) w.push_back(cur), cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) w.push_back(cur);
    return w;
  };
  const std::vector<std::string> have = words(device_name);
  for (const Peak& p : datasheet_peaks()) {
    bool all = true;
    for (const std::string& need : words(p.gpu)) {
      bool found = false;
      for (const std::string& h : have) found = found || h == need;
      all = all && found;
    }
    if (all) return p;
  }
  return std::nullopt;
}

inline double peak_tflops(const Peak& pk, Precision p) {
  switch (p) {
    case Precision::fp32: return pk.fp32;
    case Precision::tf32: return pk.tf32;
    case Precision::fp16_fp32acc:
    case Precision::fp16_fp16acc:
    case Precision::fp16: return pk.fp16;
    case Precision::bf16_fp32acc:
    case Precision::bf16: return pk.bf16;
  }
  return 0;
}

}  // namespace gtb::gemm
