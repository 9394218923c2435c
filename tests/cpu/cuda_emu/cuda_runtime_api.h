// A host stand-in for the CUDA runtime headers: just enough for a test to run the fused attention
// kernels' bodies on CPU threads (one block at a time, one std::thread per CUDA thread). Only a
// target that puts this folder first on its include path sees it.
//
// What it models: __syncthreads as a barrier of the block's threads; __shared__ as a function-local
// static, valid because blocks run one after another; warp shuffles through a block-wide slot array
// between two barriers, valid because every thread of the block reaches every shuffle (the kernels
// keep block-uniform control flow, which CUDA requires of __syncthreads anyway). It does not model
// warps' lock-step execution, memory ordering without a barrier, or float rounding of the device
// (the host's expf and FMA are not the GPU's): it finds indexing, masking, tiling and missing
// barriers, not device numerics.
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

using cudaError_t = int;
enum : int { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
using cudaStream_t = void*;
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return "emulated"; }

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline dim3 gridDim, blockDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

namespace gtb_emu {

class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const unsigned long gen = gen_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, arrived_ = 0;
  unsigned long gen_ = 0;
};

inline Barrier* block_barrier = nullptr;
inline float shuffle_slots[1024];

// Runs f on every thread of every block of grid; blocks one after another, each block's threads
// concurrently.
template <class F>
void launch(dim3 grid, dim3 block, const F& f) {
  gridDim = grid;
  blockDim = block;
  const int threads = int(block.x);
  Barrier bar(threads);
  block_barrier = &bar;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx.x = unsigned(t);
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx) {
          blockIdx.x = bx;
          blockIdx.y = by;
          f();
          bar.wait();  // the block's shared statics are free for the next block
        }
    });
  for (auto& th : pool) th.join();
  block_barrier = nullptr;
}

template <class Kernel>
struct Launch {
  Kernel k;
  dim3 grid, block;
  template <class... A>
  void operator()(A... a) const {
    launch(grid, block, [&] { k(a...); });
  }
};
template <class Kernel>
Launch<Kernel> make_launch(Kernel k, dim3 grid, dim3 block) {
  return {k, grid, block};
}

}  // namespace gtb_emu

inline void __syncthreads() { gtb_emu::block_barrier->wait(); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  gtb_emu::shuffle_slots[threadIdx.x] = v;
  __syncthreads();
  const float r = gtb_emu::shuffle_slots[threadIdx.x ^ unsigned(mask)];
  __syncthreads();
  return r;
}

// The kernels launch through GTB_FA_LAUNCH (kernels/transformer/cuda/attention_common.cuh).
#define GTB_FA_LAUNCH(kernel, grid, block, stream) \
  ((void)(stream), gtb_emu::make_launch(kernel, dim3(grid), dim3(block)))
