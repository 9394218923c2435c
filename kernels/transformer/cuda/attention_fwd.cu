// The fused causal attention forward on the device: flash-attention-2's online softmax over key
// tiles, FP32 throughout, writing the context and each row's log-sum-exp.
#include "kernels/common/cuda/check.h"
#include "kernels/transformer/cuda/attention.h"
#include "kernels/transformer/cuda/attention_common.cuh"

namespace gtb::cuda::xfmr {

namespace {
using fa::kThreads;

// One block per (query tile, sample * head). Thread t owns query row t / TPR of the tile; within the
// row it owns the key columns lane + TPR * c of each score tile and the head columns lane + TPR * m
// of the context, so scores, the running max and sum, and the context accumulator stay in registers.
template <int D>
__global__ void __launch_bounds__(kThreads) attention_fwd_kernel(const float* __restrict__ qkv, float* __restrict__ o,
                                                                 float* __restrict__ lse, int seq, int heads,
                                                                 float scale) {
  constexpr int B = fa::FwdTile<D>::B, TPR = kThreads / B, NC = B / TPR, ND = D / TPR;
  __shared__ fa::Tile<B, D> qs;
  __shared__ fa::Tile<B, D> kv;  // K of the key tile, then its V
  __shared__ fa::Tile<B, B> ps;
  // Tiles near the end of the sequence have the most key tiles: launched first, they end last less.
  const int qt = int(gridDim.x) - 1 - int(blockIdx.x);
  const int bh = int(blockIdx.y), b = bh / heads, h = bh % heads;
  const int dm = heads * D;
  const std::size_t ld = 3 * std::size_t(dm);
  const float* q = qkv + std::size_t(b) * seq * ld + std::size_t(h) * D;
  const float* k = q + dm;
  const float* v = q + 2 * dm;
  const int i0 = qt * B, r = int(threadIdx.x) / TPR, lane = int(threadIdx.x) % TPR, i = i0 + r;

  fa::load_tile<B, D>(qs, q, ld, i0, seq);
  float acc[ND];
#pragma unroll
  for (int m = 0; m < ND; ++m) acc[m] = 0.0f;
  // Running max of the scaled scores and the sum of exp(score - max). Every tile up to the diagonal
  // holds at least key j0 <= i (also for rows past seq, whose results are not written), so the max
  // is finite after the first tile and exp(-inf - max) = 0 rescales the empty start.
  float mrow = -INFINITY, lrow = 0.0f;
  // Causal: key tiles above the diagonal (kt > qt) are never touched.
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * B;
    __syncthreads();  // the previous tile's V reads are done
    fa::load_tile<B, D>(kv, k, ld, j0, seq);
    __syncthreads();
    float s[NC];
#pragma unroll
    for (int c = 0; c < NC; ++c) s[c] = 0.0f;
#pragma unroll 8
    for (int d = 0; d < D; ++d) {
      const float qd = qs[r][d];
#pragma unroll
      for (int c = 0; c < NC; ++c) s[c] = fmaf(qd, kv[lane + TPR * c][d], s[c]);
    }
    float tmax = -INFINITY;
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int j = j0 + lane + TPR * c;
      s[c] = (j <= i && j < seq) ? scale * s[c] : -INFINITY;
      tmax = fmaxf(tmax, s[c]);
    }
    const float mnew = fmaxf(mrow, fa::group_max<TPR>(tmax));
    const float alpha = gtb::mlp::hd_exp(mrow - mnew);
    float psum = 0.0f;
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const float p = gtb::mlp::hd_exp(s[c] - mnew);
      psum += p;
      ps[r][lane + TPR * c] = p;
    }
    lrow = lrow * alpha + fa::group_sum<TPR>(psum);
    mrow = mnew;
#pragma unroll
    for (int m = 0; m < ND; ++m) acc[m] *= alpha;
    __syncthreads();  // K reads done before V overwrites it; the probabilities are visible
    fa::load_tile<B, D>(kv, v, ld, j0, seq);
    __syncthreads();
    fa::accumulate_row<B, D, TPR, ND>(ps[r], kv, lane, acc);
  }
  if (i < seq) {
    const float inv = 1.0f / lrow;
    float* orow = o + (std::size_t(b) * seq + i) * dm + std::size_t(h) * D;
#pragma unroll
    for (int m = 0; m < ND; ++m) orow[lane + TPR * m] = acc[m] * inv;
    if (lane == 0) lse[std::size_t(bh) * seq + i] = mrow + gtb::mlp::hd_log(lrow);
  }
}

template <int D>
void launch_fwd(const float* qkv, float* o, float* lse, int batch, int seq, int heads, float scale, cudaStream_t s) {
  constexpr int B = fa::FwdTile<D>::B;
  const dim3 grid(unsigned((seq + B - 1) / B), unsigned(batch * heads));
  GTB_FA_LAUNCH(attention_fwd_kernel<D>, grid, kThreads, s)(qkv, o, lse, seq, heads, scale);
  GTB_CUDA_CHECK_LAUNCH();
}
}  // namespace

bool fused_attention_supported(int head_dim) { return fa::supported_head_dim(head_dim); }

void fused_attention_forward(const float* qkv, float* o, float* lse, int batch, int seq, int heads, int head_dim,
                             float scale, cudaStream_t s) {
  fa::check_shape("fused_attention_forward", batch, seq, heads, head_dim);
  switch (head_dim) {
    case 32: launch_fwd<32>(qkv, o, lse, batch, seq, heads, scale, s); break;
    case 64: launch_fwd<64>(qkv, o, lse, batch, seq, heads, scale, s); break;
    default: launch_fwd<128>(qkv, o, lse, batch, seq, heads, scale, s); break;
  }
}

}  // namespace gtb::cuda::xfmr
