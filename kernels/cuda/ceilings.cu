// GPU triad kernel for the device memory-bandwidth ceiling.
#include "kernels/cuda/ceilings.h"

#include "harness/cuda_check.h"
#include "kernels/common/stream.h"

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
__global__ void triad_tail(float* a, const float* b, const float* c, float scalar, std::size_t begin,
                           std::size_t n) {
  const std::size_t i = begin + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = triad(b[i], c[i], scalar);
}
}  // namespace

void stream_triad(float* a, const float* b, const float* c, float scalar, std::size_t n, cudaStream_t s) {
  int dev = 0, sms = 0;
  GTB_CUDA_CHECK(cudaGetDevice(&dev));
  GTB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::size_t n4 = n / 4;
  if (n4 > 0) {
    const int threads = 256;
    const std::size_t want = (n4 + threads - 1) / threads;
    const int blocks = static_cast<int>(want < std::size_t(sms) * 8 ? want : std::size_t(sms) * 8);
    triad_kernel<<<blocks, threads, 0, s>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                            reinterpret_cast<const float4*>(c), scalar, n4);
    GTB_CUDA_CHECK_LAUNCH();
  }
  if (n % 4) {
    triad_tail<<<1, 4, 0, s>>>(a, b, c, scalar, n4 * 4, n);
    GTB_CUDA_CHECK_LAUNCH();
  }
}
}  // namespace gtb::cuda
