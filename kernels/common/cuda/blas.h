// cuBLAS shared by the GEMM and training families: a handle, checked calls, and one GEMM entry point
// per precision. Host C++ (compiled only with CUDA).
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "kernels/common/precision.h"

namespace gtb::cuda {

// A training precision (fp16, bf16) maps as its GEMM does (gemm_precision()).
cudaDataType_t input_type(Precision p);
cudaDataType_t output_type(Precision p);
cublasComputeType_t compute_type(Precision p);
const char* compute_type_name(Precision p);  // "CUBLAS_COMPUTE_32F_FAST_TF32", ...
std::size_t element_bytes(cudaDataType_t t);

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line);

class Blas {
 public:
  explicit Blas(cudaStream_t stream = nullptr);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t get() const { return h_; }
  void set_stream(cudaStream_t s);
 private:
  cublasHandle_t h_ = nullptr;
};

// Column-major GEMM through cublasGemmEx: C = alpha * op(A) op(B) + beta * C. Scalars alpha/beta
// are given as float and converted to the compute type. Device pointers.
void gemm(const Blas& blas, Precision p, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          const void* a, int lda, const void* b, int ldb, float beta, void* c, int ldc);

std::string cublas_version();  // "13.0.0"

}  // namespace gtb::cuda

#define GTB_CUBLAS_CHECK(call)                                                      \
  do {                                                                              \
    cublasStatus_t gtb_cublas_status_ = (call);                                     \
    if (gtb_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                \
      ::gtb::cuda::throw_cublas_error(gtb_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)
