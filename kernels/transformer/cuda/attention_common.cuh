// What the fused attention kernels share: tile shapes per head width, the tile loader and the
// launchers' checks of their arguments.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "kernels/transformer/block.h"

// Every launch goes through this hook so that a host test can run the same kernel bodies on CPU
// threads (tests/cpu/cuda_emu); the kernels therefore keep block-uniform control flow around every
// __syncthreads and shuffle, as CUDA requires anyway.
#ifndef GTB_FA_LAUNCH
#define GTB_FA_LAUNCH(kernel, grid, block, stream) kernel<<<grid, block, 0, stream>>>
#endif

namespace gtb::cuda::xfmr::fa {

constexpr int kThreads = 128;  // four warps per block in every kernel

// Tile rows (queries and keys alike, so that a causal tile is either full, diagonal or skipped),
// chosen so that each kernel's static shared memory stays within the default 48 KiB: the forward
// holds Q, one K-or-V buffer and the probabilities (37 KiB at head width 128); the backward holds
// Q, dO, K, V and one or two B x B tiles (41 KiB at 64, 35 KiB at 128).
template <int D>
struct FwdTile {
  static constexpr int B = D <= 32 ? 64 : 32;
};
template <int D>
struct BwdTile {
  static constexpr int B = D <= 64 ? 32 : 16;
};

// The threads of a tile row are kThreads / B consecutive lanes of one warp: a row's reductions are
// shuffles within that group.
template <int TPR>
__device__ __forceinline__ float group_max(float v) {
  for (int o = TPR / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <int TPR>
__device__ __forceinline__ float group_sum(float v) {
  for (int o = TPR / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// A shared tile of B rows of C floats, each row padded by one float: no bank conflicts when a warp
// reads several rows at one column. Q, K, V and dO tiles have the head's D columns, probability and
// dS tiles B.
template <int B, int C>
using Tile = float[B][C + 1];

// Rows [r0, r0 + B) of one head's D columns (global row stride ld floats) into a shared tile; rows at
// or past seq read as zero.
template <int B, int D>
__device__ __forceinline__ void load_tile(Tile<B, D>& dst, const float* __restrict__ src, std::size_t ld, int r0,
                                          int seq) {
  for (int e = int(threadIdx.x); e < B * D; e += kThreads) {
    const int r = e / D, c = e % D;
    dst[r][c] = r0 + r < seq ? src[std::size_t(r0 + r) * ld + c] : 0.0f;
  }
}

// acc[m] += sum over c of w[c] * t[c][lane + TPR m]: one thread's head columns of a row of weights
// times a tile (P V in the forward, dS K for dQ).
template <int B, int D, int TPR, int ND>
__device__ __forceinline__ void accumulate_row(const float (&w)[B + 1], const Tile<B, D>& t, int lane,
                                               float (&acc)[ND]) {
#pragma unroll 4
  for (int c = 0; c < B; ++c) {
    const float p = w[c];
#pragma unroll
    for (int m = 0; m < ND; ++m) acc[m] = fmaf(p, t[c][lane + TPR * m], acc[m]);
  }
}

// The head widths the kernels are instantiated for.
inline constexpr bool supported_head_dim(int d) { return d == 32 || d == 64 || d == 128; }

// Host-side checks shared by both launchers: a bad shape is the caller's error, named.
inline void check_shape(const char* who, int batch, int seq, int heads, int head_dim) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument(std::string(who) + ": " + why); };
  if (batch < 1 || seq < 1 || heads < 1)
    bad("batch, seq and heads must be at least 1 (got " + std::to_string(batch) + ", " + std::to_string(seq) + ", " +
        std::to_string(heads) + ")");
  if (!supported_head_dim(head_dim))
    bad("head_dim " + std::to_string(head_dim) + " is not supported (32, 64 or 128)");
  // One block row of the grid per (sample, head): gridDim.y is at most 65535.
  if (static_cast<long long>(batch) * heads > 65535)
    bad("batch * heads = " + std::to_string(static_cast<long long>(batch) * heads) + " exceeds 65535");
}

}  // namespace gtb::cuda::xfmr::fa
