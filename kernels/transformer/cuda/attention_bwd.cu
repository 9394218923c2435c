// The fused causal attention backward on the device (flash-attention-2's): delta = rowsum(dO * O),
// then dK and dV per key tile and dQ per query tile, each recomputing the probabilities from the
// row log-sum-exp. No atomics: every gradient element has one writer, so the result is deterministic.
#include "kernels/common/cuda/check.h"
#include "kernels/transformer/cuda/attention.h"
#include "kernels/transformer/cuda/attention_common.cuh"

namespace gtb::cuda::xfmr {

namespace {
using fa::kThreads;
namespace xf = gtb::xfmr;

// delta[(b * heads + h) * seq + i] = dot(dO_i, O_i) over head h's columns: one warp per row.
__global__ void __launch_bounds__(kThreads) attention_delta_kernel(const float* __restrict__ o,
                                                                   const float* __restrict__ dout,
                                                                   float* __restrict__ delta, long long rows, int seq,
                                                                   int heads, int dh) {
  const long long row = (long long)blockIdx.x * (kThreads / 32) + int(threadIdx.x) / 32;
  const int lane = int(threadIdx.x) % 32;
  float acc = 0.0f;
  if (row < rows) {  // no early return: the whole block reaches the shuffles
    const long long bh = row / seq;
    const int i = int(row % seq), b = int(bh / heads), h = int(bh % heads);
    const std::size_t off = (std::size_t(b) * seq + i) * std::size_t(heads) * dh + std::size_t(h) * dh;
    for (int c = lane; c < dh; c += 32) acc = fmaf(dout[off + c], o[off + c], acc);
  }
  for (int w = 16; w > 0; w >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, w);
  if (row < rows && lane == 0) delta[row] = acc;
}

// What both backward kernels read and write.
struct BwdArgs {
  const float* __restrict__ qkv;
  const float* __restrict__ dout;
  const float* __restrict__ lse;
  const float* __restrict__ delta;
  float* __restrict__ dqkv;
  int seq, heads;
  float scale;
};

// Where the head of a block's sample * head (blockIdx.y) lives in the token-major tensors.
struct Head {
  int bh, b, h;
  const float* q;
  const float* k;
  const float* v;
  const float* dout;
  std::size_t ld_qkv, ld_o;
};
__device__ __forceinline__ Head head_of(const BwdArgs& a, int D) {
  const int dm = a.heads * D;
  Head x;
  x.bh = int(blockIdx.y), x.b = x.bh / a.heads, x.h = x.bh % a.heads;
  x.ld_qkv = 3 * std::size_t(dm);
  x.ld_o = std::size_t(dm);
  x.q = a.qkv + std::size_t(x.b) * a.seq * x.ld_qkv + std::size_t(x.h) * D;
  x.k = x.q + dm;
  x.v = x.q + 2 * dm;
  x.dout = a.dout + std::size_t(x.b) * a.seq * x.ld_o + std::size_t(x.h) * D;
  return x;
}

// The dot products of one thread's row against its columns over the D head columns, in both
// backward kernels: s[c] = x[row] . y[lane + TPR c] (the scores) and dp[c] = u[row] . w[lane + TPR c]
// (dP = dO V^T), from tiles in shared memory.
template <int B, int D, int TPR, int NC>
__device__ __forceinline__ void row_dots(const fa::Tile<B, D>& x, const fa::Tile<B, D>& y, const fa::Tile<B, D>& u,
                                         const fa::Tile<B, D>& w, int row, int lane, float (&s)[NC], float (&dp)[NC]) {
#pragma unroll
  for (int c = 0; c < NC; ++c) s[c] = dp[c] = 0.0f;
#pragma unroll 8
  for (int d = 0; d < D; ++d) {
    const float xd = x[row][d], ud = u[row][d];
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      s[c] = fmaf(xd, y[lane + TPR * c][d], s[c]);
      dp[c] = fmaf(ud, w[lane + TPR * c][d], dp[c]);
    }
  }
}

// One block per (key tile, sample * head), over the query tiles from the diagonal down. Thread t
// owns key row t / TPR; it computes the scores of query columns lane + TPR * c, and accumulates
// dK and dV at head columns lane + TPR * m in registers.
template <int D>
__global__ void __launch_bounds__(kThreads) attention_dkdv_kernel(const BwdArgs a) {
  constexpr int B = fa::BwdTile<D>::B, TPR = kThreads / B, NC = B / TPR, ND = D / TPR;
  __shared__ fa::Tile<B, D> ks, vs, qs, dos;
  __shared__ fa::Tile<B, B> pt;   // P transposed: [key][query]
  __shared__ fa::Tile<B, B> dst;  // dS transposed
  __shared__ float lse_s[B], delta_s[B];
  const int tiles = int(gridDim.x), kt = int(blockIdx.x);  // the first key tiles have the most work
  const Head x = head_of(a, D);
  const int bh = x.bh, b = x.b, h = x.h, seq = a.seq;
  const int j0 = kt * B, jr = int(threadIdx.x) / TPR, lane = int(threadIdx.x) % TPR, j = j0 + jr;

  fa::load_tile<B, D>(ks, x.k, x.ld_qkv, j0, seq);
  fa::load_tile<B, D>(vs, x.v, x.ld_qkv, j0, seq);
  float dk[ND], dv[ND];
#pragma unroll
  for (int m = 0; m < ND; ++m) dk[m] = dv[m] = 0.0f;
  for (int qt = kt; qt < tiles; ++qt) {
    const int i0 = qt * B;
    __syncthreads();  // the previous query tile's reads are done
    fa::load_tile<B, D>(qs, x.q, x.ld_qkv, i0, seq);
    fa::load_tile<B, D>(dos, x.dout, x.ld_o, i0, seq);
    if (int(threadIdx.x) < B) {
      const int ii = i0 + int(threadIdx.x);
      lse_s[threadIdx.x] = ii < seq ? a.lse[std::size_t(bh) * seq + ii] : 0.0f;
      delta_s[threadIdx.x] = ii < seq ? a.delta[std::size_t(bh) * seq + ii] : 0.0f;
    }
    __syncthreads();
    float s[NC], dp[NC];
    row_dots<B, D, TPR, NC>(ks, qs, vs, dos, jr, lane, s, dp);  // S^T and dP^T: key row jr
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int ic = lane + TPR * c, i = i0 + ic;
      const float p = (j <= i && i < seq) ? gtb::mlp::hd_exp(a.scale * s[c] - lse_s[ic]) : 0.0f;
      pt[jr][ic] = p;
      dst[jr][ic] = xf::softmax_backward(p, dp[c], delta_s[ic], a.scale);
    }
    __syncthreads();
#pragma unroll 4
    for (int ic = 0; ic < B; ++ic) {
      const float p = pt[jr][ic], g = dst[jr][ic];
#pragma unroll
      for (int m = 0; m < ND; ++m) {
        dv[m] = fmaf(p, dos[ic][lane + TPR * m], dv[m]);
        dk[m] = fmaf(g, qs[ic][lane + TPR * m], dk[m]);
      }
    }
  }
  if (j < seq) {
    const int dm = a.heads * D;
    float* row = a.dqkv + (std::size_t(b) * seq + j) * x.ld_qkv + std::size_t(h) * D;
#pragma unroll
    for (int m = 0; m < ND; ++m) {
      row[dm + lane + TPR * m] = dk[m];
      row[2 * dm + lane + TPR * m] = dv[m];
    }
  }
}

// One block per (query tile, sample * head), over the key tiles up to the diagonal: dQ = dS K with
// thread t owning query row t / TPR (as in the forward).
template <int D>
__global__ void __launch_bounds__(kThreads) attention_dq_kernel(const BwdArgs a) {
  constexpr int B = fa::BwdTile<D>::B, TPR = kThreads / B, NC = B / TPR, ND = D / TPR;
  __shared__ fa::Tile<B, D> qs, dos, ks, vs;
  __shared__ fa::Tile<B, B> dss;
  const int qt = int(gridDim.x) - 1 - int(blockIdx.x);  // the last query tiles have the most work
  const Head x = head_of(a, D);
  const int bh = x.bh, b = x.b, h = x.h, seq = a.seq;
  const int i0 = qt * B, r = int(threadIdx.x) / TPR, lane = int(threadIdx.x) % TPR, i = i0 + r;

  fa::load_tile<B, D>(qs, x.q, x.ld_qkv, i0, seq);
  fa::load_tile<B, D>(dos, x.dout, x.ld_o, i0, seq);
  const float L = i < seq ? a.lse[std::size_t(bh) * seq + i] : 0.0f;
  const float dl = i < seq ? a.delta[std::size_t(bh) * seq + i] : 0.0f;
  float dq[ND];
#pragma unroll
  for (int m = 0; m < ND; ++m) dq[m] = 0.0f;
  for (int kt = 0; kt <= qt; ++kt) {
    const int j0 = kt * B;
    __syncthreads();
    fa::load_tile<B, D>(ks, x.k, x.ld_qkv, j0, seq);
    fa::load_tile<B, D>(vs, x.v, x.ld_qkv, j0, seq);
    __syncthreads();
    float s[NC], dp[NC];
    row_dots<B, D, TPR, NC>(qs, ks, dos, vs, r, lane, s, dp);  // S and dP: query row r
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int jc = lane + TPR * c, jj = j0 + jc;
      const float p = (jj <= i && i < seq) ? gtb::mlp::hd_exp(a.scale * s[c] - L) : 0.0f;
      dss[r][jc] = xf::softmax_backward(p, dp[c], dl, a.scale);
    }
    __syncthreads();
    fa::accumulate_row<B, D, TPR, ND>(dss[r], ks, lane, dq);
  }
  if (i < seq) {
    float* row = a.dqkv + (std::size_t(b) * seq + i) * x.ld_qkv + std::size_t(h) * D;
#pragma unroll
    for (int m = 0; m < ND; ++m) row[lane + TPR * m] = dq[m];
  }
}

template <int D>
void launch_bwd(const float* qkv, const float* dout, const float* lse, const float* delta, float* dqkv, int batch,
                int seq, int heads, float scale, cudaStream_t s) {
  constexpr int B = fa::BwdTile<D>::B;
  const dim3 grid(unsigned((seq + B - 1) / B), unsigned(batch * heads));
  const BwdArgs args{qkv, dout, lse, delta, dqkv, seq, heads, scale};
  GTB_FA_LAUNCH(attention_dkdv_kernel<D>, grid, kThreads, s)(args);
  GTB_CUDA_CHECK_LAUNCH();
  GTB_FA_LAUNCH(attention_dq_kernel<D>, grid, kThreads, s)(args);
  GTB_CUDA_CHECK_LAUNCH();
}
}  // namespace

void fused_attention_backward(const float* qkv, const float* o, const float* dout, const float* lse, float* delta,
                              float* dqkv, int batch, int seq, int heads, int head_dim, float scale, cudaStream_t s) {
  fa::check_shape("fused_attention_backward", batch, seq, heads, head_dim);
  const long long rows = static_cast<long long>(batch) * heads * seq;
  constexpr int per_block = kThreads / 32;
  const unsigned blocks = unsigned((rows + per_block - 1) / per_block);
  GTB_FA_LAUNCH(attention_delta_kernel, blocks, kThreads, s)(o, dout, delta, rows, seq, heads, head_dim);
  GTB_CUDA_CHECK_LAUNCH();
  switch (head_dim) {
    case 32: launch_bwd<32>(qkv, dout, lse, delta, dqkv, batch, seq, heads, scale, s); break;
    case 64: launch_bwd<64>(qkv, dout, lse, delta, dqkv, batch, seq, heads, scale, s); break;
    default: launch_bwd<128>(qkv, dout, lse, delta, dqkv, batch, seq, heads, scale, s); break;
  }
}

}  // namespace gtb::cuda::xfmr
