// The current oneDNN (3.x, PyPI's GNU OpenMP build) beside Debian's oneDNN 2.6: its matmul (BF16 or
// FP32 operands, FP32 out) and SGEMM, loaded at run time and called through its handle, since both
// libraries export the same names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gtb::cpu::dnnl3 {

// Compiled with oneDNN 3's headers and a library path (configure found it).
bool built();
// Loads the library on the first call; true when it is usable. The first failure is kept.
bool available();
// Why it is not available ("" when it is): not built (configure's reason), or the load failed.
std::string unavailable_reason();
// Throws gtb::Skip(unavailable_reason()) unless available().
void require();

std::string version();    // e.g. "oneDNN 3.2.0 (40112196)"; "" when unavailable
// The ISA oneDNN dispatches to on this CPU (dnnl_get_effective_cpu_isa), e.g. "avx512_core_amx",
// "avx512_core_bf16", "avx512_core_vnni", "avx2"; "" when unavailable.
std::string isa();
std::string threading();  // "GNU OpenMP (the process's libgomp)"

// Row-major C[m x n] = alpha * op(A) op(B) + beta * C through dnnl_sgemm (oneDNN's threads: OpenMP's).
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);

// One matmul primitive for a fixed shape: row-major C[m x n] (FP32, leading dimension ldc) =
// op(A) op(B) + beta C, A and B dense in their transposition (BF16 words or FP32 values, as `bf16`
// says). Created once (oneDNN picks and JIT-compiles its kernel), run many times.
class Matmul {
 public:
  // Throws gtb::Skip when oneDNN 3 is unavailable or has no implementation of the shape and type on
  // this CPU, std::runtime_error on another failure.
  Matmul(bool bf16, bool trans_a, bool trans_b, int m, int n, int k, int ldc, float beta);
  ~Matmul();
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  // a, b: uint16_t bfloat16 words when bf16, floats otherwise. Returns when C is complete.
  void run(const void* a, const void* b, float* c) const;
  std::string impl() const;  // oneDNN's implementation, e.g. "brg:avx512_core_amx"
  // Whether the implementation is oneDNN's reference (scalar) code rather than a kernel for the ISA.
  bool reference() const { return impl().find("ref") != std::string::npos; }

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

// Why oneDNN 3's BF16 matmul cannot serve as a native BF16 GEMM here ("" when it can): not available,
// no implementation for this CPU, or only the reference one. Probed once per process.
std::string native_bf16_unavailable();

}  // namespace gtb::cpu::dnnl3
