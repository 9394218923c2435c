// Intel oneMKL's SGEMM and BF16 GEMM (bf16 in, fp32 accumulate and out), loaded at run time and
// called through its handle (it and OpenBLAS export the same CBLAS names).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gtb::cpu::mkl {

// Compiled with oneMKL's headers and a library path (configure found it).
bool built();
// Loads the library on the first call (GNU OpenMP threading layer, as many threads as OpenMP has);
// true when it is usable. The first failure is kept: later calls return it without retrying.
bool available();
// Why it is not available ("" when it is): not built, or the load failed (the loader's message).
std::string unavailable_reason();
// Throws gtb::Skip(unavailable_reason()) unless available().
void require();

std::string version();    // e.g. "oneMKL 2026.2.0 (build 20260915)"; "" when unavailable
std::string processor();  // the code path MKL reports for this CPU, e.g. "Intel(R) Architecture processors"
std::string threading();  // "gnu_thread (the process's libgomp)"
int threads();
void set_threads(int n);  // MKL's own pool; inside an OpenMP parallel region MKL runs on one thread

// Row-major C[m x n] = alpha * op(A) op(B) + beta * C, leading dimensions = row lengths.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
// The same with A and B in bfloat16 (the upper half of an IEEE float), products accumulated in FP32.
void gemm_bf16(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
               const std::uint16_t* b, int ldb, float beta, float* c, int ldc);

}  // namespace gtb::cpu::mkl

namespace gtb::cpu {
// float -> bfloat16, round to nearest even (NaN stays a quiet NaN): the rounding PyTorch and oneDNN use.
inline std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}
inline float from_bf16(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}
// rows x cols of `src` (row stride ld) into `dst` packed (row stride cols), rounded to bfloat16.
void to_bf16_rows(const float* src, int rows, int cols, int ld, std::uint16_t* dst);
}  // namespace gtb::cpu
