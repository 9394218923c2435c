// The device build-flag variants: the same kernels (flag_kernels.cu) compiled once per nvcc flag set
// (default, -lineinfo, -G, --use_fast_math), each into its own namespace, and the table naming them.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/pitfalls/flag_math.h"

namespace gtb::pitfalls {

// One compiled copy of the kernels. Each launcher enqueues on `s` and returns the launch's error.
struct DeviceKernels {
  const char* name;   // default, lineinfo, G, fast_math
  const char* flags;  // the device flags this copy was compiled with
  cudaError_t (*chain)(const float* x, float* y, std::size_t n, cudaStream_t s);
  cudaError_t (*act)(const float* z, const float* bias, const float* g, float* a, float* dz, std::size_t rows,
                     std::size_t width, cudaStream_t s);
  cudaError_t (*xent)(const float* logits, const int* labels, float* grad, float* loss, std::size_t rows, int classes,
                      cudaStream_t s);
  cudaError_t (*reduce)(const float* x, float* partial, std::size_t n, cudaStream_t s);
};

// nvcc's default (optimised device code, no line table) is what the others are compared to; the
// project's own build adds -lineinfo, which is the lineinfo variant.
inline constexpr const char* kDeviceBaseline = "default";

const std::vector<DeviceKernels>& device_variants();  // default, lineinfo, G, fast_math
const DeviceKernels* find_device_variant(const char* name);

}  // namespace gtb::pitfalls
