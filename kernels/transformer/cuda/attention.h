// Causal multi-head attention on the device: the fused (flash-style) kernels of gtb's own. The
// layouts are the CPU step's: qkv is tokens x 3d row-major (token = sample * seq + position), query
// of head h in columns [h*dh, (h+1)*dh), key at d + h*dh, value at 2d + h*dh; the context `o` is
// tokens x d with head h in columns [h*dh, (h+1)*dh). scale = 1/sqrt(dh) multiplies the scores.
#pragma once

#include <cuda_runtime_api.h>

namespace gtb::cuda::xfmr {

// Whether the fused kernels support this head width (they are instantiated per width: 32, 64, 128).
bool fused_attention_supported(int head_dim);

// o = softmax(scale * Q K^T, causal) V per (sample, head), never storing the scores; lse (batch *
// heads * seq floats, index (b * heads + h) * seq + i) receives each row's log-sum-exp of the
// scaled scores, which the backward needs.
void fused_attention_forward(const float* qkv, float* o, float* lse, int batch, int seq, int heads, int head_dim,
                             float scale, cudaStream_t s);

// dqkv (tokens x 3d, fully overwritten) from the context's gradient `dout` (tokens x d), recomputing
// the probabilities from lse. `delta` is scratch of batch * heads * seq floats (rowsum(dout * o)).
void fused_attention_backward(const float* qkv, const float* o, const float* dout, const float* lse, float* delta,
                              float* dqkv, int batch, int seq, int heads, int head_dim, float scale, cudaStream_t s);

}  // namespace gtb::cuda::xfmr
