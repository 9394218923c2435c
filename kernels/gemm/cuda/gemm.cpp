// GPU side of the GEMM family: device facts, precision-typed operands and the cuBLAS GEMM.
#include "kernels/gemm/cuda/gemm.h"

#include <cstdint>
#include <stdexcept>

#include "kernels/common/cuda/check.h"

namespace gtb::cuda {

GemmDevice gemm_device() {
  int dev = 0;
  GTB_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  GTB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  GemmDevice d;
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  return d;
}

namespace {
std::vector<std::uint16_t> to_16bit(Precision p, const float* x, std::size_t n) {
  std::vector<std::uint16_t> out(n);
  const bool bf16 = gemm_precision(p) == Precision::bf16_fp32acc;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
    out[i] = bf16 ? gemm::float_to_bf16(x[i]) : gemm::float_to_half(x[i]);
  return out;
}
void upload(Precision p, const DeviceBuffer& dst, const float* src, std::size_t n) {
  if (gemm::input_bytes(p) == 4) {
    GTB_CUDA_CHECK(cudaMemcpy(dst.get(), src, n * sizeof(float), cudaMemcpyHostToDevice));
  } else {
    const std::vector<std::uint16_t> h = to_16bit(p, src, n);
    GTB_CUDA_CHECK(cudaMemcpy(dst.get(), h.data(), n * sizeof(std::uint16_t), cudaMemcpyHostToDevice));
  }
}
}  // namespace

GemmOperands::GemmOperands(Precision p, int m, int n, int k, const float* a, const float* b)
    : p_(p), m_(m), n_(n), k_(k) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("GemmOperands: m, n and k must be positive");
  // The storage sizes the records count must be the ones cuBLAS is given.
  if (element_bytes(input_type(p)) != std::size_t(gemm::input_bytes(p)) ||
      element_bytes(output_type(p)) != std::size_t(gemm::output_bytes(p)))
    throw std::logic_error(std::string("GEMM precision ") + to_string(p) +
                           ": element sizes differ between kernels/common/gemm.h and kernels/cuda/blas.h");
  const std::size_t in = std::size_t(gemm::input_bytes(p)), out = std::size_t(gemm::output_bytes(p));
  a_ = DeviceBuffer(in * std::size_t(m) * std::size_t(k));
  b_ = DeviceBuffer(in * std::size_t(k) * std::size_t(n));
  c_ = DeviceBuffer(out * std::size_t(m) * std::size_t(n));
  upload(p, a_, a, std::size_t(m) * std::size_t(k));
  upload(p, b_, b, std::size_t(k) * std::size_t(n));
  // A cudaMemcpy from pageable memory may return before its last DMA has landed, and it runs on
  // the legacy default stream, which does not order work on the non-blocking streams the GEMMs
  // use: wait for the copies here.
  GTB_CUDA_CHECK(cudaDeviceSynchronize());
}

void GemmOperands::poison_c(cudaStream_t s) { GTB_CUDA_CHECK(cudaMemsetAsync(c_.get(), 0xFF, c_.bytes(), s)); }

std::vector<float> GemmOperands::download_c() const {
  const std::size_t n = std::size_t(m_) * std::size_t(n_);
  std::vector<float> out(n);
  if (gemm::output_bytes(p_) == 4) {
    GTB_CUDA_CHECK(cudaMemcpy(out.data(), c_.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> h(n);
  GTB_CUDA_CHECK(cudaMemcpy(h.data(), c_.get(), n * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  const bool bf16 = gemm_precision(p_) == Precision::bf16_fp32acc;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
    out[i] = bf16 ? gemm::bf16_to_float(h[i]) : gemm::half_to_float(h[i]);
  return out;
}

void gemm_cublas(const Blas& blas, const GemmOperands& o) {
  // Column-major view: C^T (n x m, ld n) = B^T (n x k, ld n) * A^T (k x m, ld k).
  gemm(blas, o.precision(), false, false, o.n(), o.m(), o.k(), 1.0f, o.b(), o.n(), o.a(), o.k(), 0.0f,
       o.c(), o.n());
}

}  // namespace gtb::cuda
