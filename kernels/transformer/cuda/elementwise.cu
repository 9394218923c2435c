// The transformer step's elementwise CUDA kernels (one warp per row for the row reductions).
#include "kernels/transformer/cuda/elementwise.h"

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/transformer/block.h"

namespace gtb::cuda::xfmr {

namespace {
namespace xf = gtb::xfmr;
constexpr int kWarps = 4;  // rows per block of the row kernels

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__global__ void ln_forward_kernel(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ mean,
                                  float* __restrict__ rstd, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, int rows, int d, float eps) {
  const int row = blockIdx.x * kWarps + int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (row >= rows) return;
  const float* xr = x + std::size_t(row) * d;
  float s = 0;
  for (int j = lane; j < d; j += 32) s += xr[j];
  const float mu = warp_sum(s) / float(d);
  float q = 0;
  for (int j = lane; j < d; j += 32) q += (xr[j] - mu) * (xr[j] - mu);
  const float rs = xf::ln_rstd(warp_sum(q) / float(d), eps);
  for (int j = lane; j < d; j += 32) y[std::size_t(row) * d + j] = xf::ln_forward(xr[j], mu, rs, gamma[j], beta[j]);
  if (lane == 0) mean[row] = mu, rstd[row] = rs;
}

__global__ void ln_backward_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                                   const float* __restrict__ mean, const float* __restrict__ rstd,
                                   const float* __restrict__ gamma, const float* __restrict__ dres,
                                   float* __restrict__ dx, float* __restrict__ dgamma, float* __restrict__ dbeta,
                                   int rows, int d) {
  const int row = blockIdx.x * kWarps + int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (row >= rows) return;
  const std::size_t o = std::size_t(row) * d;
  const float mu = mean[row], rs = rstd[row];
  float s1 = 0, s2 = 0;
  for (int j = lane; j < d; j += 32) {
    const float xh = (x[o + j] - mu) * rs, dxh = dy[o + j] * gamma[j];
    s1 += dxh;
    s2 += dxh * xh;
    atomicAdd(dgamma + j, dy[o + j] * xh);
    atomicAdd(dbeta + j, dy[o + j]);
  }
  s1 = warp_sum(s1) / float(d);
  s2 = warp_sum(s2) / float(d);
  for (int j = lane; j < d; j += 32) {
    const float xh = (x[o + j] - mu) * rs;
    dx[o + j] = dres[o + j] + xf::ln_backward(dy[o + j] * gamma[j], xh, rs, s1, s2);
  }
}

__global__ void causal_softmax_kernel(float* __restrict__ s, int count, int seq, float scale) {
  const long long row = (long long)blockIdx.x * kWarps + int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (row >= (long long)count * seq) return;
  const int i = int(row % seq);
  float* r = s + row * seq;
  float mx = -INFINITY;
  for (int j = lane; j <= i; j += 32) mx = fmaxf(mx, scale * r[j]);
  mx = warp_max(mx);
  float sum = 0;
  for (int j = lane; j <= i; j += 32) sum += gtb::mlp::hd_exp(scale * r[j] - mx);
  const float inv = 1.0f / warp_sum(sum);
  for (int j = lane; j < seq; j += 32) r[j] = j <= i ? xf::softmax_p(r[j], scale, mx, inv) : 0.0f;
}

__global__ void bias_gelu_kernel(float* __restrict__ u, float* __restrict__ g, const float* __restrict__ b, int rows,
                                 int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)rows * n) return;
  const float v = u[i] + b[i % n];
  u[i] = v;
  g[i] = xf::gelu(v);
}

__global__ void adamw_kernel(float* __restrict__ w, float* __restrict__ m, float* __restrict__ v,
                             const float* __restrict__ g, long long n, float lr, float b1, float b2, float eps,
                             float wd, float c1, float c2) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) xf::adamw(w[i], m[i], v[i], g[i], lr, b1, b2, eps, wd, c1, c2);
}

unsigned row_blocks(long long rows) { return unsigned((rows + kWarps - 1) / kWarps); }
unsigned flat_blocks(long long n) { return unsigned((n + 255) / 256); }
}  // namespace

void layer_norm_forward(const float* x, float* y, float* mean, float* rstd, const float* gamma, const float* beta,
                        int rows, int d, float eps, cudaStream_t s) {
  if (rows <= 0) return;
  GTB_LAUNCH(ln_forward_kernel, row_blocks(rows), 32 * kWarps, 0, s)(x, y, mean, rstd, gamma, beta, rows, d, eps);
  GTB_CUDA_CHECK_LAUNCH();
}
void layer_norm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                         const float* dres, float* dx, float* dgamma, float* dbeta, int rows, int d, cudaStream_t s) {
  if (rows <= 0) return;
  GTB_LAUNCH(ln_backward_kernel, row_blocks(rows), 32 * kWarps, 0, s)(dy, x, mean, rstd, gamma, dres, dx, dgamma,
                                                                       dbeta, rows, d);
  GTB_CUDA_CHECK_LAUNCH();
}
void causal_softmax(float* scores, int count, int seq, float scale, cudaStream_t s) {
  if (count <= 0 || seq <= 0) return;
  GTB_LAUNCH(causal_softmax_kernel, row_blocks((long long)count * seq), 32 * kWarps, 0, s)(scores, count, seq, scale);
  GTB_CUDA_CHECK_LAUNCH();
}
void bias_gelu(float* u, float* g, const float* b, int rows, int n, cudaStream_t s) {
  if (rows <= 0 || n <= 0) return;
  GTB_LAUNCH(bias_gelu_kernel, flat_blocks((long long)rows * n), 256, 0, s)(u, g, b, rows, n);
  GTB_CUDA_CHECK_LAUNCH();
}
void adamw(float* w, float* m, float* v, const float* g, long long n, float lr, float b1, float b2, float eps, float wd,
           float c1, float c2, cudaStream_t s) {
  if (n <= 0) return;
  GTB_LAUNCH(adamw_kernel, flat_blocks(n), 256, 0, s)(w, m, v, g, n, lr, b1, b2, eps, wd, c1, c2);
  GTB_CUDA_CHECK_LAUNCH();
}

}  // namespace gtb::cuda::xfmr
