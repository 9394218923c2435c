// Launchers of the transformer step's own CUDA kernels: layer norm, causal softmax, bias + GELU and
// AdamW, each element's math from kernels/transformer/block.h (the definitions the CPU step and the
// float64 reference use). All tensors are FP32, row-major, on the device.
#pragma once

#include <cuda_runtime_api.h>

namespace gtb::cuda::xfmr {

// y = LN(x) per row (rows x d), with each row's mean and rstd kept for the backward.
void layer_norm_forward(const float* x, float* y, float* mean, float* rstd, const float* gamma, const float* beta,
                        int rows, int d, float eps, cudaStream_t s);
// dx = dres + LN backward of dy; dgamma and dbeta are accumulated (atomically) into.
void layer_norm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gamma,
                         const float* dres, float* dx, float* dgamma, float* dbeta, int rows, int d, cudaStream_t s);
// Causal softmax in place over `count` score matrices of seq x seq (row i keeps keys j <= i, the
// rest set to zero); scale multiplies the scores first.
void causal_softmax(float* scores, int count, int seq, float scale, cudaStream_t s);
// u += b (per column), g = gelu(u), rows x n.
void bias_gelu(float* u, float* g, const float* b, int rows, int n, cudaStream_t s);
// AdamW over n parameters; c1, c2 are step t's bias corrections (gtb::mlp::adam_corrections).
void adamw(float* w, float* m, float* v, const float* g, long long n, float lr, float b1, float b2, float eps, float wd,
           float c1, float c2, cudaStream_t s);

}  // namespace gtb::cuda::xfmr
