// cuBLAS wrapper: precisions, compute types, checked calls, one GEMM entry point.
#include "kernels/common/cuda/blas.h"

#include <stdexcept>

#include "kernels/common/cuda/check.h"
#include "kernels/common/errors.h"

namespace gtb::cuda {

cudaDataType_t input_type(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return CUDA_R_32F;
    case Precision::fp16_fp32acc:
    case Precision::fp16_fp16acc:
    case Precision::fp16: return CUDA_R_16F;
    case Precision::bf16_fp32acc:
    case Precision::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}
// Half-precision inputs write half-precision outputs (what a training framework stores).
cudaDataType_t output_type(Precision p) { return input_type(p); }

cublasComputeType_t compute_type(Precision p) {
  switch (p) {
    case Precision::fp32: return CUBLAS_COMPUTE_32F;
    case Precision::tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case Precision::fp16_fp32acc:
    case Precision::fp16: return CUBLAS_COMPUTE_32F;
    case Precision::fp16_fp16acc: return CUBLAS_COMPUTE_16F;
    case Precision::bf16_fp32acc:
    case Precision::bf16: return CUBLAS_COMPUTE_32F;
  }
  return CUBLAS_COMPUTE_32F;
}

const char* compute_type_name(Precision p) {
  switch (compute_type(p)) {
    case CUBLAS_COMPUTE_32F: return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case CUBLAS_COMPUTE_16F: return "CUBLAS_COMPUTE_16F";
    default: return "?";
  }
}

std::size_t element_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_64F: return 8;
    default: throw std::invalid_argument("element_bytes: unsupported data type");
  }
}

void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  std::string where = file;
  where = where.substr(where.find_last_of('/') + 1);
  const std::string msg = std::string(call) + ": " + cublasGetStatusString(s) + " (" + cublasGetStatusName(s) +
                          ") at " + where + ":" + std::to_string(line);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw std::runtime_error(msg);
}

Blas::Blas(cudaStream_t stream) {
  GTB_CUBLAS_CHECK(cublasCreate(&h_));
  if (stream) GTB_CUBLAS_CHECK(cublasSetStream(h_, stream));
}
Blas::~Blas() {
  if (h_) cublasDestroy(h_);
}
void Blas::set_stream(cudaStream_t s) { GTB_CUBLAS_CHECK(cublasSetStream(h_, s)); }

void gemm(const Blas& blas, Precision p, bool ta, bool tb, int m, int n, int k, float alpha, const void* a,
          int lda, const void* b, int ldb, float beta, void* c, int ldc) {
  const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (compute_type(p) == CUBLAS_COMPUTE_16F) {
    // 16-bit compute takes 16-bit scalars.
    const __half ha = __float2half(alpha), hb = __float2half(beta);
    GTB_CUBLAS_CHECK(cublasGemmEx(blas.get(), oa, ob, m, n, k, &ha, a, input_type(p), lda, b, input_type(p), ldb, &hb,
                                  c, output_type(p), ldc, compute_type(p), CUBLAS_GEMM_DEFAULT));
  } else {
    GTB_CUBLAS_CHECK(cublasGemmEx(blas.get(), oa, ob, m, n, k, &alpha, a, input_type(p), lda, b, input_type(p), ldb,
                                  &beta, c, output_type(p), ldc, compute_type(p), CUBLAS_GEMM_DEFAULT));
  }
}

std::string cublas_version() {
  int maj = 0, min = 0, pat = 0;
  cublasGetProperty(MAJOR_VERSION, &maj);
  cublasGetProperty(MINOR_VERSION, &min);
  cublasGetProperty(PATCH_LEVEL, &pat);
  return std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(pat);
}

}  // namespace gtb::cuda
