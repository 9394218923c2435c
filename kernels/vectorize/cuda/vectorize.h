// GPU variants of the vectorize family (host-callable; kernels in vectorize.cu, Thrust in
// vectorize_thrust.cu; the CUDA Graph is kernels/common/cuda/graph.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/graph.h"  // CapturedGraph: the graph form of a chain
#include "kernels/common/names.h"
#include "kernels/vectorize/elementwise.h"

namespace gtb::cuda {

// How the same elementwise work is put on the GPU.
//   launch_loop: a host loop launching one one-thread-per-element kernel per chunk of `chunk` elements
//   serial:      a single thread walks all n elements
//   scalar:      one thread per element, 4-byte loads and stores, one launch
//   vec4:        grid-stride, 16-byte float4 loads and stores, scalar tail for n % 4 (fused for the chain)
//   unfused:     the chain as three vec4 kernels (scale, bias, activation); axpy has no unfused form
GTB_NAMED_ENUM(Form, kFormNames, launch_loop, serial, scalar, vec4, unfused);

inline constexpr int kBlockThreads = 256;

// Kernel launches one call of `form` enqueues for n elements (what launch_loop pays per run).
std::int64_t launches(Form form, std::size_t n, std::size_t chunk);

// Enqueue y = a*x + y (resp. y = chain(x)) on stream s; returns the number of kernels launched.
// vec4 needs x and y 16-byte aligned (cudaMalloc memory is) and throws std::invalid_argument
// otherwise; launch_loop needs chunk > 0. Launch errors throw gtb::CudaError.
std::int64_t axpy(Form form, float a, const float* x, float* y, std::size_t n, std::size_t chunk, cudaStream_t s);
std::int64_t chain(Form form, ChainParams p, const float* x, float* y, std::size_t n, std::size_t chunk,
                   cudaStream_t s);

// thrust::transform with the same functors (par_nosync, so no host synchronization per call).
void axpy_thrust(float a, const float* x, float* y, std::size_t n, cudaStream_t s);
void chain_thrust(ChainParams p, const float* x, float* y, std::size_t n, cudaStream_t s);

}  // namespace gtb::cuda
