// MLP forward kernels: bias + activation, and fp32 -> half/bfloat16 conversion.
#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/train/cuda/mlp_dtype.h"

namespace gtb::cuda::mlp {

int sm_count() {
  static const int n = device_attribute(cudaDevAttrMultiProcessorCount);
  return n;
}
int max_threads_per_sm() {
  static const int n = device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  return n;
}

namespace {
constexpr int kBlock = 256;

template <class T>
__global__ void bias_act_kernel(T* __restrict__ z, T* __restrict__ a, const float* __restrict__ b, std::size_t n,
                                int cols, Act act) {
  // The column advances by stride % cols per iteration: one modulo per thread, not per element.
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t step = stride % std::size_t(cols);
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  std::size_t col = i % std::size_t(cols);
  for (; i < n; i += stride) {
    const float v = to_f(z[i]) + b[col];
    col += step;
    if (col >= std::size_t(cols)) col -= std::size_t(cols);
    const T zs = from_f<T>(v);
    z[i] = zs;
    // The activation is taken of the stored (rounded) Z so that backward sees the same value.
    a[i] = from_f<T>(gtb::mlp::act_forward(act, to_f(zs)));
  }
}

template <class T>
__global__ void to_lowp_kernel(const float* __restrict__ src, T* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = from_f<T>(src[i]);
}
}  // namespace

void bias_act(DType t, void* z, void* a, const float* b, int rows, int cols, Act act, cudaStream_t s) {
  const std::size_t n = std::size_t(rows) * std::size_t(cols);
  const long long grid = elementwise_grid(n, kBlock);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(bias_act_kernel<T>, unsigned(grid), kBlock, 0, s)(static_cast<T*>(z), static_cast<T*>(a), b, n, cols,
                                                                 act);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

void to_lowp(DType t, const float* src, void* dst, std::size_t n, cudaStream_t s) {
  const long long grid = elementwise_grid(n, kBlock);
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(to_lowp_kernel<T>, unsigned(grid), kBlock, 0, s)(src, static_cast<T*>(dst), n);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

std::vector<KernelInfo> fwd_kernel_info(DType t, int rows, int cols) {
  const std::size_t n = std::size_t(rows) * std::size_t(cols);
  std::vector<KernelInfo> v;
  dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    v.push_back(kernel_info("bias_act", bias_act_kernel<T>, kBlock, elementwise_grid(n, kBlock)));
    if (t != DType::f32) v.push_back(kernel_info("to_lowp", to_lowp_kernel<T>, kBlock, elementwise_grid(n, kBlock)));
  });
  return v;
}

}  // namespace gtb::cuda::mlp
