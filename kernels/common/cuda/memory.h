// RAII owners of CUDA streams, events, device and pinned memory; shared by kernels and the harness.
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "kernels/common/buffer.h"

namespace gtb::cuda {

class Stream {
 public:
  Stream();  // non-blocking stream
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const;
 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(bool timing = true);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const;
  void sync() const;
 private:
  cudaEvent_t e_ = nullptr;
};

// The L2 cache of the current device in bytes (cudaDevAttrL2CacheSize); 0 when it cannot be read.
long long device_l2_bytes();

// Seconds between two recorded events (after synchronizing on `end`).
double elapsed_seconds(const Event& start, const Event& end);

// cudaMalloc / cudaFree. Allocation failure throws gtb::OutOfMemory.
struct DeviceAllocator {
  static void* allocate(std::size_t bytes);
  static void release(void* p) noexcept;
};
// cudaHostAlloc with `flags` / cudaFreeHost. Allocation failure throws gtb::OutOfMemory.
struct PinnedAllocator {
  static void* allocate(std::size_t bytes, unsigned flags = cudaHostAllocDefault);
  static void release(void* p) noexcept;
};

// Device memory owner: DeviceBuffer(bytes).
using DeviceBuffer = OwnedBuffer<DeviceAllocator>;
// Pinned host memory owner: PinnedBuffer(bytes) or PinnedBuffer(bytes, cudaHostAlloc flags).
using PinnedBuffer = OwnedBuffer<PinnedAllocator>;

}  // namespace gtb::cuda
