// MLP optimizer kernels (SGD with momentum, Adam) over the flat FP32 master weights, with loss-scale
// unscaling, overflow skip and the low-precision weight copy written in the same pass.
#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/train/cuda/mlp_dtype.h"

namespace gtb::cuda::mlp {

namespace {
constexpr int kBlock = 256;

// LP = float means "no low-precision copy".
template <class LP>
__global__ void sgd_kernel(float* __restrict__ w, float* __restrict__ v, const float* __restrict__ g,
                           LP* __restrict__ lowp, std::size_t n, float lr, float mu, const ScaleState* ss) {
  if (ss && ss->found_inf) return;
  const float inv = ss ? 1.0f / ss->scale : 1.0f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float wi = w[i], vi = v[i];
    gtb::mlp::sgd_momentum(wi, vi, g[i] * inv, lr, mu);
    w[i] = wi;
    v[i] = vi;
    if (lowp) lowp[i] = from_f<LP>(wi);
  }
}

template <class LP>
__global__ void adam_kernel(float* __restrict__ w, float* __restrict__ m, float* __restrict__ v,
                            const float* __restrict__ g, LP* __restrict__ lowp, std::size_t n, float lr, float b1,
                            float b2, float eps, const ScaleState* ss) {
  if (ss->found_inf) return;
  const float inv = 1.0f / ss->scale;
  float c1, c2;
  gtb::mlp::adam_corrections(ss->step + 1, b1, b2, c1, c2);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float wi = w[i], mi = m[i], vi = v[i];
    gtb::mlp::adam(wi, mi, vi, g[i] * inv, lr, b1, b2, eps, c1, c2);
    w[i] = wi;
    m[i] = mi;
    v[i] = vi;
    if (lowp) lowp[i] = from_f<LP>(wi);
  }
}

__global__ void scale_end_kernel(ScaleState* ss, bool dynamic, int interval) {
  gtb::mlp::loss_scale_end_step(*ss, dynamic, interval);
}
}  // namespace

void sgd(float* w, float* v, const float* g, void* lowp, DType lowp_type, std::size_t n, float lr, float mu,
         const ScaleState* ss, cudaStream_t s) {
  const unsigned grid = unsigned(elementwise_grid(n, kBlock));
  dispatch(lowp ? lowp_type : DType::f32, [&](auto* tag) {
    using LP = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(sgd_kernel<LP>, grid, kBlock, 0, s)(w, v, g, static_cast<LP*>(lowp), n, lr, mu, ss);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

void adam(float* w, float* m, float* v, const float* g, void* lowp, DType lowp_type, std::size_t n, float lr,
          float b1, float b2, float eps, const ScaleState* ss, cudaStream_t s) {
  const unsigned grid = unsigned(elementwise_grid(n, kBlock));
  dispatch(lowp ? lowp_type : DType::f32, [&](auto* tag) {
    using LP = std::remove_pointer_t<decltype(tag)>;
    GTB_LAUNCH(adam_kernel<LP>, grid, kBlock, 0, s)(w, m, v, g, static_cast<LP*>(lowp), n, lr, b1, b2, eps, ss);
  });
  GTB_CUDA_CHECK_LAUNCH();
}

void scale_end(ScaleState* ss, bool dynamic, int interval, cudaStream_t s) {
  GTB_LAUNCH(scale_end_kernel, 1, 1, 0, s)(ss, dynamic, interval);
  GTB_CUDA_CHECK_LAUNCH();
}

std::vector<KernelInfo> opt_kernel_info(DType lowp_type, bool use_adam, std::size_t n) {
  std::vector<KernelInfo> v;
  const long long grid = elementwise_grid(n, kBlock);
  dispatch(lowp_type, [&](auto* tag) {
    using LP = std::remove_pointer_t<decltype(tag)>;
    if (use_adam)
      v.push_back(kernel_info("adam", adam_kernel<LP>, kBlock, grid));
    else
      v.push_back(kernel_info("sgd", sgd_kernel<LP>, kBlock, grid));
  });
  return v;
}

}  // namespace gtb::cuda::mlp
