// The collective input pattern on the device: the same pattern_value() the CPU side uses.
#include <cuda_bf16.h>

#include "kernels/parallel/collective.h"
#include "kernels/parallel/cuda/nccl_fill.h"

namespace gtb::parallel::nccl {

namespace {
template <class T>
__global__ void fill_kernel(T* x, std::size_t n, std::uint64_t seed, int rank, std::size_t first) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = pattern_value(seed, rank, first + i);
    if constexpr (sizeof(T) == 4) {
      x[i] = v;
    } else {
      const __nv_bfloat16 b = __float2bfloat16_rn(v);
      x[i] = *reinterpret_cast<const std::uint16_t*>(&b);
    }
  }
}
unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + 255) / 256;
  return unsigned(b < 4096 ? (b ? b : 1) : 4096);
}
}  // namespace

void fill_pattern_f32(float* x, std::size_t n, std::uint64_t seed, int rank, std::size_t first, cudaStream_t s) {
  fill_kernel<float><<<blocks_for(n), 256, 0, s>>>(x, n, seed, rank, first);
}
void fill_pattern_bf16(std::uint16_t* x, std::size_t n, std::uint64_t seed, int rank, std::size_t first,
                       cudaStream_t s) {
  fill_kernel<std::uint16_t><<<blocks_for(n), 256, 0, s>>>(x, n, seed, rank, first);
}

}  // namespace gtb::parallel::nccl
