// The device kernels of the build-flag A/B, kept small because the -G copy of this file compiles
// slowly. Compiled once per variant with GTB_PF_VARIANT naming it; the project's flags do not reach it.
#include <cstddef>

#include "kernels/common/cuda/launch.cuh"
#include "kernels/pitfalls/cuda/flag_kernels.h"

#if !defined(GTB_PF_VARIANT) || !defined(GTB_PF_FLAGS)
#error "compile with -DGTB_PF_VARIANT=<name> -DGTB_PF_FLAGS=\"...\""
#endif

#define GTB_PF_CAT2(a, b) a##b
#define GTB_PF_CAT(a, b) GTB_PF_CAT2(a, b)
#define GTB_PF_STR2(a) #a
#define GTB_PF_STR(a) GTB_PF_STR2(a)
#define GTB_PF_NS GTB_PF_CAT(dv_, GTB_PF_VARIANT)
#define GTB_PF_TABLE GTB_PF_CAT(device_kernels_, GTB_PF_VARIANT)

namespace gtb::pitfalls {
namespace GTB_PF_NS {
namespace {

constexpr int kThreads = 256;
static_assert(kReduceBlock % kThreads == 0, "a reduction block is whole threads");

unsigned grid_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65536 * 16 ? b : 65536 * 16);  // grid-stride beyond that
}

__global__ void chain_kernel(const float* __restrict__ x, float* __restrict__ y, std::size_t n, ChainParams p) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    y[i] = gtb::chain(x[i], p);
}

__global__ void act_kernel(const float* __restrict__ z, const float* __restrict__ bias, const float* __restrict__ g,
                           float* __restrict__ a, float* __restrict__ dz, std::size_t n, std::size_t width) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    act_fwd_bwd(z[i], bias[i % width], g[i], a[i], dz[i]);
}

__global__ void xent_kernel(const float* __restrict__ logits, const int* __restrict__ labels, float* __restrict__ grad,
                            float* __restrict__ loss, std::size_t rows, int classes) {
  for (std::size_t r = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; r < rows;
       r += std::size_t(gridDim.x) * blockDim.x)
    loss[r] = xent_row(logits + r * classes, labels[r], grad + r * classes, classes);
}

// One block per kReduceBlock elements: strided per-thread sums, then a shared-memory tree.
__global__ void reduce_kernel(const float* __restrict__ x, float* __restrict__ partial) {
  __shared__ float s[kThreads];
  const float* p = x + blockIdx.x * kReduceBlock;
  float v = 0.0f;
  for (std::size_t i = threadIdx.x; i < kReduceBlock; i += kThreads) v += p[i] * p[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

cudaError_t chain(const float* x, float* y, std::size_t n, cudaStream_t st) {
  if (n) GTB_LAUNCH(chain_kernel, grid_for(n), kThreads, 0, st)(x, y, n, kFlagChain);
  return cudaGetLastError();
}
cudaError_t act(const float* z, const float* bias, const float* g, float* a, float* dz, std::size_t rows,
                std::size_t width, cudaStream_t st) {
  const std::size_t n = rows * width;
  if (n) GTB_LAUNCH(act_kernel, grid_for(n), kThreads, 0, st)(z, bias, g, a, dz, n, width);
  return cudaGetLastError();
}
cudaError_t xent(const float* logits, const int* labels, float* grad, float* loss, std::size_t rows, int classes,
                 cudaStream_t st) {
  if (rows) GTB_LAUNCH(xent_kernel, grid_for(rows), kThreads, 0, st)(logits, labels, grad, loss, rows, classes);
  return cudaGetLastError();
}
cudaError_t reduce(const float* x, float* partial, std::size_t n, cudaStream_t st) {
  const std::size_t blocks = n / kReduceBlock;
  if (blocks) GTB_LAUNCH(reduce_kernel, static_cast<unsigned>(blocks), kThreads, 0, st)(x, partial);
  return cudaGetLastError();
}

}  // namespace
}  // namespace GTB_PF_NS

const DeviceKernels& GTB_PF_TABLE() {
  static const DeviceKernels k{GTB_PF_STR(GTB_PF_VARIANT), GTB_PF_FLAGS, GTB_PF_NS::chain, GTB_PF_NS::act,
                               GTB_PF_NS::xent, GTB_PF_NS::reduce};
  return k;
}

}  // namespace gtb::pitfalls
