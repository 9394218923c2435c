// GPU triad kernel for the device memory-bandwidth ceiling.
#include "kernels/ceilings/cuda/ceilings.h"

#include <cstdint>

#include "kernels/ceilings/stream.h"
#include "kernels/common/cuda/check.h"

namespace gtb::cuda {
namespace {
__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float scalar, std::size_t n4) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(triad(x.x, y.x, scalar), triad(x.y, y.y, scalar), triad(x.z, y.z, scalar),
                       triad(x.w, y.w, scalar));
  }
}
// Grid-stride from `begin`: the n % 4 tail after the float4 part, or all of n when a pointer is not
// 16-byte aligned (a float4 access there is a misaligned-address fault, which is sticky).
__global__ void triad_scalar(float* a, const float* b, const float* c, float scalar, std::size_t begin,
                             std::size_t n) {
  for (std::size_t i = begin + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    a[i] = triad(b[i], c[i], scalar);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
}  // namespace

void stream_triad(float* a, const float* b, const float* c, float scalar, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  const int sms = gtb::device_attribute(cudaDevAttrMultiProcessorCount);
  const int threads = 256;
  const std::size_t max_blocks = std::size_t(sms) * 8;
  auto grid = [&](std::size_t items) {
    const std::size_t want = (items + threads - 1) / threads;
    return static_cast<int>(want < max_blocks ? want : max_blocks);
  };
  if (!aligned16(a) || !aligned16(b) || !aligned16(c)) {
    triad_scalar<<<grid(n), threads, 0, s>>>(a, b, c, scalar, 0, n);
    GTB_CUDA_CHECK_LAUNCH();
    return;
  }
  const std::size_t n4 = n / 4;
  if (n4 > 0) {
    triad_kernel<<<grid(n4), threads, 0, s>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                              reinterpret_cast<const float4*>(c), scalar, n4);
    GTB_CUDA_CHECK_LAUNCH();
  }
  if (n % 4) {
    triad_scalar<<<1, 4, 0, s>>>(a, b, c, scalar, n4 * 4, n);
    GTB_CUDA_CHECK_LAUNCH();
  }
}
}  // namespace gtb::cuda
