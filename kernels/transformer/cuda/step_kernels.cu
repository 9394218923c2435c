// The GPU transformer step's glue kernels; each element's math is block.h's (shared with the CPU
// step and the float64 reference).
#include "kernels/transformer/cuda/step_kernels.h"

#include <cuda_bf16.h>

#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/launch.cuh"
#include "kernels/transformer/block.h"

namespace gtb::cuda::xfmr {

namespace {
namespace xf = gtb::xfmr;
constexpr int kWarps = 4;        // rows per block of the row kernels
constexpr int kBlock = 256;      // threads of the flat kernels
constexpr int kSumRows = 64;     // rows one thread adds before its atomic in column_sums

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ b, long long total, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) y[i] += b[i % n];
}

__global__ void residual_kernel(float* out, const float* a, const float* __restrict__ y, const float* __restrict__ b,
                                long long total, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) out[i] = a[i] + y[i] + b[i % n];
}

__global__ void mse_kernel(const float* __restrict__ y, const float* __restrict__ t, float* __restrict__ dy,
                           float* __restrict__ row_loss, int rows, int n, float inv) {
  const int row = blockIdx.x * kWarps + int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (row >= rows) return;
  const std::size_t o = std::size_t(row) * n;
  float s = 0;
  for (int j = lane; j < n; j += 32) {
    const float e = y[o + j] - t[o + j];
    s += e * e;
    dy[o + j] = e * inv;
  }
  s = warp_sum(s);
  if (lane == 0) row_loss[row] = 0.5f * s * inv;
}

__global__ void column_sums_kernel(const float* __restrict__ x, float* __restrict__ out, int rows, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int r0 = blockIdx.y * kSumRows, r1 = min(rows, r0 + kSumRows);
  float s = 0;
  for (int r = r0; r < r1; ++r) s += x[std::size_t(r) * n + j];
  atomicAdd(out + j, s);
}

// In place: the step's only use overwrites dL/dg with dL/du, and __restrict__ on two names of one
// buffer would let the compiler assume they do not alias.
__global__ void gelu_backward_kernel(float* __restrict__ d, const float* __restrict__ u, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] *= xf::gelu_derivative(u[i]);
}

__global__ void softmax_backward_kernel(const float* __restrict__ p, float* __restrict__ dp, int count, int seq,
                                        float scale) {
  const long long row = (long long)blockIdx.x * kWarps + int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  if (row >= (long long)count * seq) return;
  const int i = int(row % seq);
  const float* pr = p + row * seq;
  float* dr = dp + row * seq;
  float dot = 0;
  for (int j = lane; j <= i; j += 32) dot += pr[j] * dr[j];
  dot = warp_sum(dot);
  for (int j = lane; j < seq; j += 32) dr[j] = j <= i ? xf::softmax_backward(pr[j], dr[j], dot, scale) : 0.0f;
}

__global__ void to_bf16_kernel(const float* __restrict__ src, __nv_bfloat16* __restrict__ dst, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __float2bfloat16_rn(src[i]);
}

__global__ void advance_kernel(int* t) { *t += 1; }

__global__ void adamw_counted_kernel(float* __restrict__ w, float* __restrict__ m, float* __restrict__ v,
                                     const float* __restrict__ g, __nv_bfloat16* __restrict__ w16, long long n,
                                     float lr, float b1, float b2, float eps, float wd, const int* __restrict__ t) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float c1, c2;
  gtb::mlp::adam_corrections(*t, b1, b2, c1, c2);
  float wi = w[i], mi = m[i], vi = v[i];
  xf::adamw(wi, mi, vi, g[i], lr, b1, b2, eps, wd, c1, c2);
  w[i] = wi, m[i] = mi, v[i] = vi;
  if (w16) w16[i] = __float2bfloat16_rn(wi);
}

unsigned row_blocks(long long rows) { return unsigned((rows + kWarps - 1) / kWarps); }
unsigned flat_blocks(long long n) { return unsigned((n + kBlock - 1) / kBlock); }
}  // namespace

void add_bias(float* y, const float* b, int rows, int n, cudaStream_t s) {
  const long long total = (long long)rows * n;
  if (total <= 0) return;
  GTB_LAUNCH(add_bias_kernel, flat_blocks(total), kBlock, 0, s)(y, b, total, n);
  GTB_CUDA_CHECK_LAUNCH();
}
void residual_add(float* out, const float* a, const float* y, const float* b, int rows, int n, cudaStream_t s) {
  const long long total = (long long)rows * n;
  if (total <= 0) return;
  GTB_LAUNCH(residual_kernel, flat_blocks(total), kBlock, 0, s)(out, a, y, b, total, n);
  GTB_CUDA_CHECK_LAUNCH();
}
void mse_loss(const float* y, const float* t, float* dy, float* row_loss, int rows, int n, cudaStream_t s) {
  if (rows <= 0 || n <= 0) return;
  const float inv = float(1.0 / (double(rows) * double(n)));
  GTB_LAUNCH(mse_kernel, row_blocks(rows), 32 * kWarps, 0, s)(y, t, dy, row_loss, rows, n, inv);
  GTB_CUDA_CHECK_LAUNCH();
}
void column_sums(const float* x, float* out, int rows, int n, cudaStream_t s) {
  if (rows <= 0 || n <= 0) return;
  const dim3 grid(unsigned((n + kBlock - 1) / kBlock), unsigned((rows + kSumRows - 1) / kSumRows));
  GTB_LAUNCH(column_sums_kernel, grid, kBlock, 0, s)(x, out, rows, n);
  GTB_CUDA_CHECK_LAUNCH();
}
void gelu_backward(float* d, const float* u, long long n, cudaStream_t s) {
  if (n <= 0) return;
  GTB_LAUNCH(gelu_backward_kernel, flat_blocks(n), kBlock, 0, s)(d, u, n);
  GTB_CUDA_CHECK_LAUNCH();
}
void causal_softmax_backward(const float* p, float* dp, int count, int seq, float scale, cudaStream_t s) {
  if (count <= 0 || seq <= 0) return;
  GTB_LAUNCH(softmax_backward_kernel, row_blocks((long long)count * seq), 32 * kWarps, 0, s)(p, dp, count, seq, scale);
  GTB_CUDA_CHECK_LAUNCH();
}
void to_bf16(const float* src, void* dst, long long n, cudaStream_t s) {
  if (n <= 0) return;
  GTB_LAUNCH(to_bf16_kernel, flat_blocks(n), kBlock, 0, s)(src, static_cast<__nv_bfloat16*>(dst), n);
  GTB_CUDA_CHECK_LAUNCH();
}
void advance_step(int* t, cudaStream_t s) {
  GTB_LAUNCH(advance_kernel, 1, 1, 0, s)(t);
  GTB_CUDA_CHECK_LAUNCH();
}
void adamw_counted(float* w, float* m, float* v, const float* g, void* w16, long long n, float lr, float b1, float b2,
                   float eps, float wd, const int* t, cudaStream_t s) {
  if (n <= 0) return;
  GTB_LAUNCH(adamw_counted_kernel, flat_blocks(n), kBlock, 0, s)(w, m, v, g, static_cast<__nv_bfloat16*>(w16), n, lr,
                                                                 b1, b2, eps, wd, t);
  GTB_CUDA_CHECK_LAUNCH();
}

}  // namespace gtb::cuda::xfmr
