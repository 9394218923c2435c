// CPU matmul through oneDNN, when the build found it: FP32 (a second SGEMM, whose kernels oneDNN picks
// from the CPU's ISA at run time, independently of OpenBLAS's core detection) and BF16/FP16 inputs
// with FP32 accumulation (OpenBLAS 0.3.21 as packaged exports no sbgemm and has no half GEMM).
#pragma once

#include <memory>
#include <string>

#include "kernels/common/cpu/blas.h"  // dnnl_built(), dnnl_version()

namespace gtb::cpu {


// C[m x n] = A[m x k] * B[k x n], row-major, with A, B and C stored in f32, bf16 or f16 and the
// products accumulated in f32 by oneDNN. Inputs are converted from f32 once, at construction,
// outside any timed region. Throws gtb::Skip when oneDNN is absent or has no implementation of
// the type on this CPU (the reason names which).
class DnnlMatmul {
 public:
  enum class Type { f32, bf16, f16 };
  DnnlMatmul(Type type, int m, int n, int k, const float* a, const float* b);
  ~DnnlMatmul();
  DnnlMatmul(const DnnlMatmul&) = delete;
  DnnlMatmul& operator=(const DnnlMatmul&) = delete;
  void run();                   // one matmul, returns when it is complete
  void result(float* c) const;  // C converted to f32
  std::string impl() const;     // oneDNN's implementation name, e.g. "brg:avx512_core_bf16"
  int threads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace gtb::cpu
