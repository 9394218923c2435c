// Transfer-family kernels: the loader consumer's checksum and fixed-length spin, and the overlap
// workload's elementwise compute.
#include <chrono>

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/transfer/cuda/transfer_kernels.h"
#include "kernels/transfer/transfer.h"

namespace gtb::cuda::transfer {
namespace {
__global__ void checksum_kernel(const unsigned char* data, std::size_t words, std::size_t tail,
                                unsigned long long* out) {
  unsigned long long sum = 0;
  const auto* w = reinterpret_cast<const unsigned long long*>(data);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x)
    sum += w[i];
  if (tail && blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long t = 0;
    for (std::size_t b = 0; b < tail; ++b) t |= static_cast<unsigned long long>(data[8 * words + b]) << (8 * b);
    sum += t;
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}

__device__ unsigned long long global_ns() {
#if defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else  // the host stand-in of tests/cpu/cuda_emu
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
#endif
}

__global__ void spin(unsigned long long ns) {
  const unsigned long long end = global_ns() + ns;
  while (global_ns() < end) {
  }
}

__global__ void overlap_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, int iters) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = gtb::transfer::overlap_compute(in[i], iters);
}

int grid_for(std::size_t n, int threads) {
  const int sms = gtb::device_attribute(cudaDevAttrMultiProcessorCount);
  const std::size_t want = (n + std::size_t(threads) - 1) / std::size_t(threads);
  const std::size_t cap = std::size_t(sms) * 8;
  return static_cast<int>(want < 1 ? 1 : (want < cap ? want : cap));
}
}  // namespace

void checksum_words(const void* data, std::size_t bytes, unsigned long long* out, cudaStream_t s) {
  // The data pointer comes from cudaMalloc (256-byte aligned), so whole words are aligned loads.
  const int threads = 256;
  GTB_LAUNCH(checksum_kernel, grid_for(bytes / 8, threads), threads, 0, s)(static_cast<const unsigned char*>(data),
                                                                       bytes / 8, bytes % 8, out);
  GTB_CUDA_CHECK_LAUNCH();
}

void spin_kernel(std::uint64_t ns, cudaStream_t s) {
  GTB_LAUNCH(spin, 1, 32, 0, s)(static_cast<unsigned long long>(ns));
  GTB_CUDA_CHECK_LAUNCH();
}

void overlap_compute(const float* in, float* out, std::size_t n, int iters, cudaStream_t s) {
  const int threads = 256;
  GTB_LAUNCH(overlap_kernel, grid_for(n, threads), threads, 0, s)(in, out, n, iters);
  GTB_CUDA_CHECK_LAUNCH();
}

}  // namespace gtb::cuda::transfer
