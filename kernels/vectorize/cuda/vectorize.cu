// The vectorize family's hand-written kernels: per-chunk launches, one serial thread, one thread per
// element, and grid-stride float4 (fused and unfused), all applying the shared elementwise ops.
#include "kernels/vectorize/cuda/vectorize.h"

#include <stdexcept>

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/vectorize/cuda/vectorize_ops.h"

namespace gtb::cuda {
namespace {

template <class Op>
__device__ __forceinline__ float apply(const Op& op, const float* x, const float* y, std::size_t i) {
  float xv = 0.0f, yv = 0.0f;
  if constexpr (Op::kReadsX) xv = x[i];
  if constexpr (Op::kReadsY) yv = y[i];
  return op(xv, yv);
}

// One element per thread, 4-byte accesses. The launch loop runs this kernel on one chunk at a time.
template <class Op>
__global__ void scalar_kernel(Op op, const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = apply(op, x, y, i);
}

// A single thread walks the whole array: what a CPU-style loop becomes when moved to the GPU as is.
template <class Op>
__global__ void serial_kernel(Op op, const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = apply(op, x, y, i);
}

// Grid-stride over float4 (16-byte loads and stores), then the n % 4 tail one element per thread.
// The float4 parameters carry __restrict__ so the x loads can use the read-only path (ld.global.nc).
template <class Op>
__global__ void vec4_kernel(Op op, const float4* __restrict__ x4, float4* __restrict__ y4, std::size_t n) {
  const std::size_t n4 = n / 4;
  const std::size_t tid = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = tid; i < n4; i += stride) {
    float4 xv = make_float4(0.0f, 0.0f, 0.0f, 0.0f), yv = xv;
    if constexpr (Op::kReadsX) xv = x4[i];
    if constexpr (Op::kReadsY) yv = y4[i];
    y4[i] = make_float4(op(xv.x, yv.x), op(xv.y, yv.y), op(xv.z, yv.z), op(xv.w, yv.w));
  }
  const std::size_t t = n4 * 4 + tid;
  if (t < n) {
    float* y = reinterpret_cast<float*>(y4);
    y[t] = apply(op, reinterpret_cast<const float*>(x4), y, t);
  }
}

unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
}

int sm_count() {
  static const int sms = gtb::device_attribute(cudaDevAttrMultiProcessorCount);
  return sms;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <class Op>
void launch_vec4(const Op& op, const float* x, float* y, std::size_t n, cudaStream_t s) {
  if ((Op::kReadsX && !aligned16(x)) || !aligned16(y))
    throw std::invalid_argument("vectorize vec4: arrays must be 16-byte aligned for float4 access");
  // Enough blocks to fill every SM (8 x 256 threads = 2048, the per-SM maximum), no more: the
  // grid-stride loop covers the rest.
  const std::size_t n4 = n / 4;
  const std::size_t want = blocks_for(n4 > 0 ? n4 : 1);
  const std::size_t cap = std::size_t(sm_count()) * 8;
  const unsigned grid = static_cast<unsigned>(want < cap ? want : cap);
  GTB_LAUNCH(vec4_kernel<Op>, grid, kBlockThreads, 0, s)(op, reinterpret_cast<const float4*>(x),
                                                         reinterpret_cast<float4*>(y), n);
  GTB_CUDA_CHECK_LAUNCH();
}

template <class Op>
std::int64_t run(Form form, const Op& op, const float* x, float* y, std::size_t n, std::size_t chunk, cudaStream_t s) {
  if (n == 0) return 0;
  switch (form) {
    case Form::launch_loop: {
      if (chunk == 0) throw std::invalid_argument("vectorize launch_loop: chunk must be > 0");
      std::int64_t count = 0;
      for (std::size_t begin = 0; begin < n; begin += chunk, ++count) {
        const std::size_t len = n - begin < chunk ? n - begin : chunk;
        GTB_LAUNCH(scalar_kernel<Op>, blocks_for(len), kBlockThreads, 0, s)(op, x + begin, y + begin, len);
      }
      GTB_CUDA_CHECK_LAUNCH();  // one check after the loop keeps the host loop itself lean
      return count;
    }
    case Form::serial:
      GTB_LAUNCH(serial_kernel<Op>, 1, 1, 0, s)(op, x, y, n);
      GTB_CUDA_CHECK_LAUNCH();
      return 1;
    case Form::scalar:
      GTB_LAUNCH(scalar_kernel<Op>, blocks_for(n), kBlockThreads, 0, s)(op, x, y, n);
      GTB_CUDA_CHECK_LAUNCH();
      return 1;
    case Form::vec4:
      launch_vec4(op, x, y, n, s);
      return 1;
    case Form::unfused:
      break;
  }
  throw std::invalid_argument(std::string("vectorize: form '") + to_string(form) + "' does not apply here");
}

}  // namespace

std::int64_t launches(Form form, std::size_t n, std::size_t chunk) {
  if (n == 0) return 0;
  if (form == Form::launch_loop) return chunk == 0 ? 0 : static_cast<std::int64_t>((n + chunk - 1) / chunk);
  return form == Form::unfused ? 3 : 1;
}

std::int64_t axpy(Form form, float a, const float* x, float* y, std::size_t n, std::size_t chunk, cudaStream_t s) {
  return run(form, ops::Axpy{a}, x, y, n, chunk, s);
}

std::int64_t chain(Form form, ChainParams p, const float* x, float* y, std::size_t n, std::size_t chunk,
                   cudaStream_t s) {
  if (form != Form::unfused) return run(form, ops::Chain{p}, x, y, n, chunk, s);
  if (n == 0) return 0;
  // Three passes over memory instead of one: y = scale(x); y = bias(y); y = activation(y).
  launch_vec4(ops::Scale{p}, x, y, n, s);
  launch_vec4(ops::Bias{p}, nullptr, y, n, s);
  launch_vec4(ops::Activation{}, nullptr, y, n, s);
  return 3;
}

}  // namespace gtb::cuda
