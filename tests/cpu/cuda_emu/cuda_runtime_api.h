// A host stand-in for the CUDA runtime headers: just enough for a test to run gtb's kernel bodies
// on CPU threads (one block at a time, one std::thread per CUDA thread). Only a target that puts
// this folder first on its include path sees it.
//
// What it models: blocks of one, two or three dimensions (threads numbered x fastest, warps of 32
// consecutive numbers, as CUDA's); __syncthreads as a barrier of the block's threads; __shared__ as a
// function-local static, valid because blocks run one after another; dynamic shared memory
// (GTB_DYNAMIC_SHARED, kernels/common/cuda/launch.cuh) as one buffer of exactly the launch's size,
// filled with NaN bytes before each block, as a block's shared memory holds no zeros; warp shuffles through a slot array between
// two barriers of the warp's 32 threads, valid because every thread of a warp reaches every shuffle
// (a warp that returns as a whole, past the last row, takes no part: CUDA requires warp-uniform
// control flow around a full-mask shuffle anyway); atomicAdd under a lock. It does not model warps'
// lock-step execution, memory ordering without a barrier, or float rounding of the device (the
// host's expf and FMA are not the GPU's): it finds indexing, masking, tiling and missing barriers,
// not device numerics. gtb_emu::plant_last_block_as_first runs a grid's last block with block
// index 0 (a planted indexing error: the tests show their checks catch it).
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using cudaError_t = int;
enum : int { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorStreamCaptureInvalidated = 901 };
using cudaStream_t = void*;
namespace gtb_emu {
inline thread_local cudaError_t last_error = cudaSuccess;  // what cudaGetLastError reports, then clears
inline bool fail_end_capture = false;  // cudaStreamEndCapture fails as an invalidated capture does
inline int graphs_alive = 0;           // graphs and executable graphs not yet destroyed
}  // namespace gtb_emu
inline cudaError_t cudaGetLastError() {
  const cudaError_t e = gtb_emu::last_error;
  gtb_emu::last_error = cudaSuccess;
  return e;
}
inline const char* cudaGetErrorString(cudaError_t) { return "emulated"; }
inline const char* cudaGetErrorName(cudaError_t) { return "cudaErrorEmulated"; }

// The device the stand-in reports: few SMs, so that grid-stride loops take several strides.
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxThreadsPerMultiProcessor = 39 };
namespace gtb_emu {
inline int sm_count = 2;
}  // namespace gtb_emu
inline cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? gtb_emu::sm_count : a == cudaDevAttrMaxThreadsPerMultiProcessor ? 2048 : 0;
  return cudaSuccess;
}
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel, int block, std::size_t) {
  *blocks = 2048 / block;
  return cudaSuccess;
}
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

// CUDA Graph capture, enough for kernels/common/cuda/graph.cpp: nothing is captured; a graph is a
// counted token, and an end of capture can be made to fail, leaving its error as the last error.
struct CUgraph_st {};
struct CUgraphExec_st {};
using cudaGraph_t = CUgraph_st*;
using cudaGraphExec_t = CUgraphExec_st*;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal };
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaSuccess; }
namespace gtb_emu {
// A graph or executable graph: made and destroyed as a counted token.
template <class Token>
cudaError_t make_token(Token** t) {
  ++graphs_alive;
  *t = new Token;
  return cudaSuccess;
}
template <class Token>
cudaError_t destroy_token(Token* t) {
  --graphs_alive;
  delete t;
  return cudaSuccess;
}
}  // namespace gtb_emu
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) {
  *g = nullptr;
  if (gtb_emu::fail_end_capture) return gtb_emu::last_error = cudaErrorStreamCaptureInvalidated;
  return gtb_emu::make_token(g);
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { return gtb_emu::destroy_token(g); }
inline cudaError_t cudaGraphGetNodes(cudaGraph_t, void*, std::size_t* n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t, unsigned long long) {
  return gtb_emu::make_token(e);
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { return gtb_emu::destroy_token(e); }
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaSuccess; }

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
namespace gtb_emu {
inline thread_local unsigned thread_rank = 0;  // x + y*blockDim.x + z*blockDim.x*blockDim.y: what warps divide
inline unsigned char* dynamic_shared = nullptr;  // the running block's dynamic shared memory
}  // namespace gtb_emu
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
inline std::vector<Barrier*> warp_barriers;  // one per warp of the running block size
inline float shuffle_slots[1024];
inline std::mutex atomic_lock;
inline bool plant_last_block_as_first = false;

// Runs f on every thread of every block of grid; blocks one after another, each block's threads
// concurrently; smem bytes of dynamic shared memory.
template <class F>
void launch(dim3 grid, dim3 block, const F& f, std::size_t smem = 0) {
  gridDim = grid;
  blockDim = block;
  const int threads = int(block.x * block.y * block.z);
  Barrier bar(threads);
  // Exactly smem bytes, so that a sanitizer sees an access past the launch's size.
  std::unique_ptr<unsigned char[]> shared(smem ? new unsigned char[smem] : nullptr);
  dynamic_shared = shared.get();
  block_barrier = &bar;
  std::vector<std::unique_ptr<Barrier>> warps;
  warp_barriers.clear();
  for (int w = 0; w * 32 < threads; ++w) {
    warps.push_back(std::make_unique<Barrier>(threads - w * 32 < 32 ? threads - w * 32 : 32));
    warp_barriers.push_back(warps.back().get());
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      thread_rank = unsigned(t);
      threadIdx.x = unsigned(t) % block.x;
      threadIdx.y = unsigned(t) / block.x % block.y;
      threadIdx.z = unsigned(t) / (block.x * block.y);
      for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
          for (unsigned bx = 0; bx < grid.x; ++bx) {
            const bool last =
                bx + 1 == grid.x && by + 1 == grid.y && bz + 1 == grid.z && grid.x * grid.y * grid.z > 1;
            const bool as_first = plant_last_block_as_first && last;
            blockIdx.x = as_first ? 0 : bx;
            blockIdx.y = as_first ? 0 : by;
            blockIdx.z = as_first ? 0 : bz;
            if (smem) {
              if (t == 0) std::memset(shared.get(), 0xff, smem);  // NaN in every float, -1 in every int
              bar.wait();
            }
            f();
            bar.wait();  // the block's shared memory is free for the next block
          }
    });
  for (auto& th : pool) th.join();
  block_barrier = nullptr;
  dynamic_shared = nullptr;
  warp_barriers.clear();
}

template <class Kernel>
struct Launch {
  Kernel k;
  dim3 grid, block;
  std::size_t smem;
  template <class... A>
  void operator()(A... a) const {
    launch(grid, block, [&] { k(a...); }, smem);
  }
};
template <class Kernel>
Launch<Kernel> make_launch(Kernel k, dim3 grid, dim3 block, std::size_t smem = 0) {
  return {k, grid, block, smem};
}

}  // namespace gtb_emu

inline void __syncthreads() { gtb_emu::block_barrier->wait(); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  const unsigned t = gtb_emu::thread_rank;
  gtb_emu::Barrier& warp = *gtb_emu::warp_barriers[t / 32];
  gtb_emu::shuffle_slots[t] = v;
  warp.wait();
  const float r = gtb_emu::shuffle_slots[t ^ unsigned(mask)];
  warp.wait();
  return r;
}
inline unsigned long long __shfl_down_sync(unsigned, unsigned long long v, int delta) {
  static unsigned long long slots[1024];
  const unsigned t = gtb_emu::thread_rank;
  gtb_emu::Barrier& warp = *gtb_emu::warp_barriers[t / 32];
  slots[t] = v;
  warp.wait();
  // A lane past the warp's end gets its own value back, as CUDA's does.
  const unsigned long long r = t % 32 + unsigned(delta) < 32 ? slots[t + unsigned(delta)] : v;
  warp.wait();
  return r;
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  std::lock_guard<std::mutex> lock(gtb_emu::atomic_lock);
  const unsigned long long old = *p;
  *p = old + v;
  return old;
}
inline float atomicAdd(float* p, float v) {
  std::lock_guard<std::mutex> lock(gtb_emu::atomic_lock);
  const float old = *p;
  *p = old + v;
  return old;
}
inline int atomicExch(int* p, int v) {
  std::lock_guard<std::mutex> lock(gtb_emu::atomic_lock);
  const int old = *p;
  *p = v;
  return old;
}
inline int min(int a, int b) { return a < b ? a : b; }

// The kernels launch through GTB_LAUNCH (kernels/common/cuda/launch.cuh) or, the fused attention's,
// GTB_FA_LAUNCH (kernels/transformer/cuda/attention_common.cuh).
#define GTB_FA_LAUNCH(kernel, grid, block, stream) \
  ((void)(stream), gtb_emu::make_launch(kernel, dim3(grid), dim3(block)))
#define GTB_LAUNCH(kernel, grid, block, smem, stream) \
  ((void)(stream), gtb_emu::make_launch(kernel, dim3(grid), dim3(block), std::size_t(smem)))
// A kernel's dynamic shared memory: the launch's buffer, which GTB_LAUNCH sized.
#define GTB_DYNAMIC_SHARED(type, name) type* const name = reinterpret_cast<type*>(gtb_emu::dynamic_shared)
