// Launchers of the GPU transformer step's glue kernels: bias and residual adds, the loss, bias
// gradients, the GELU and softmax backward, BF16 casts and AdamW with its step count on the device
// (so that a captured step replays with the right bias corrections). FP32 row-major tensors; a
// BF16 buffer is passed as void*.
#pragma once

#include <cuda_runtime_api.h>

namespace gtb::cuda::xfmr {

// y += b per column (rows x n).
void add_bias(float* y, const float* b, int rows, int n, cudaStream_t s);
// out = a + y + b per column (rows x n); out may be a.
void residual_add(float* out, const float* a, const float* y, const float* b, int rows, int n, cudaStream_t s);
// row_loss[r] = 0.5 * sum_j (y - t)^2 / (rows * n); dy = (y - t) / (rows * n).
void mse_loss(const float* y, const float* t, float* dy, float* row_loss, int rows, int n, cudaStream_t s);
// out[j] += sum over rows of x[r][j] (atomic partial sums: out must be cleared first).
void column_sums(const float* x, float* out, int rows, int n, cudaStream_t s);
// d *= gelu'(u), n elements, in place: dL/dg becomes dL/du.
void gelu_backward(float* d, const float* u, long long n, cudaStream_t s);
// In place over `count` causal seq x seq matrices: dp becomes dL/ds = p * (dp - rowdot(p, dp)) *
// scale on and below the diagonal, zero above it.
void causal_softmax_backward(const float* p, float* dp, int count, int seq, float scale, cudaStream_t s);
// dst (BF16, round to nearest even) = src, n elements.
void to_bf16(const float* src, void* dst, long long n, cudaStream_t s);
// *t += 1 (one thread): the optimizer step about to be applied.
void advance_step(int* t, cudaStream_t s);
// AdamW over n parameters at step *t (bias corrections computed on the device); w16, when not
// null, receives the updated weights in BF16.
void adamw_counted(float* w, float* m, float* v, const float* g, void* w16, long long n, float lr, float b1, float b2,
                   float eps, float wd, const int* t, cudaStream_t s);

}  // namespace gtb::cuda::xfmr
