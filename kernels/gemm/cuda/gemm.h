// GPU side of the GEMM family: device facts, operands in each precision's storage type, and the
// row-major GEMM through cuBLAS (cublasGemmEx). Host C++ compiled only with CUDA.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/blas.h"
#include "kernels/common/cuda/memory.h"
#include "kernels/gemm/gemm.h"

namespace gtb::cuda {

struct GemmDevice {
  std::string name;
  int sms = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t l2_bytes = 0;
};
GemmDevice gemm_device();  // the current device

// A[m x k], B[k x n], C[m x n] row-major on the device, stored in the precision's input/output
// type. Upload converts from f32 on the host (round to nearest even), outside any timing; the
// constructor returns once A and B are on the device, so work on any stream may read them.
class GemmOperands {
 public:
  GemmOperands(Precision p, int m, int n, int k, const float* a, const float* b);
  void poison_c(cudaStream_t s);         // all-ones bytes: NaN in f32, f16 and bf16
  std::vector<float> download_c() const; // C converted to f32 (synchronize C's stream first)
  Precision precision() const { return p_; }
  int m() const { return m_; }
  int n() const { return n_; }
  int k() const { return k_; }
  const void* a() const { return a_.get(); }
  const void* b() const { return b_.get(); }
  void* c() const { return c_.get(); }

 private:
  Precision p_;
  int m_, n_, k_;
  DeviceBuffer a_, b_, c_;
};

// Row-major C = A * B via the column-major identity C^T = B^T * A^T (no transposes, no copies).
void gemm_cublas(const Blas& blas, const GemmOperands& ops);

}  // namespace gtb::cuda
