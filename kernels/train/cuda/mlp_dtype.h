// Device-side storage conversions for the MLP kernels (include from .cu files only).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/common/cuda/check.h"

#include "kernels/train/cuda/mlp_kernels.h"

namespace gtb::cuda::mlp {

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Calls f with a null pointer of the storage type matching t (to pick a template instance).
template <class F>
void dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(static_cast<float*>(nullptr)); break;
    case DType::f16: f(static_cast<__half*>(nullptr)); break;
    case DType::bf16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
}

template <class K>
KernelInfo kernel_info(const char* name, K kernel, int block, long long grid, std::size_t smem = 0) {
  KernelInfo k;
  k.name = name;
  k.block = block;
  k.grid = grid;
  GTB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, kernel, block, smem));
  k.occupancy = double(k.blocks_per_sm) * block / double(max_threads_per_sm());
  const double resident = double(k.blocks_per_sm) * sm_count();
  k.waves = resident > 0 ? double(grid) / resident : 0.0;
  return k;
}

// Grid for a grid-stride elementwise kernel: enough blocks to fill the device a few times over.
inline long long elementwise_grid(std::size_t n, int block) {
  const long long want = static_cast<long long>((n + std::size_t(block) - 1) / std::size_t(block));
  const long long cap = 8LL * sm_count() * (2048 / block);
  return want < 1 ? 1 : (want < cap ? want : cap);
}

}  // namespace gtb::cuda::mlp
