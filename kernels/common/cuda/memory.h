// RAII owners of CUDA streams, events, device and pinned memory; shared by kernels and the harness.
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

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

// Device memory owner. Allocation failure throws gtb::OutOfMemory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  std::size_t bytes() const { return n_; }
 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// Pinned host memory (cudaHostAlloc with `flags`). Allocation failure throws gtb::OutOfMemory.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, unsigned flags = cudaHostAllocDefault);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }
  template <class T> T* as() const { return static_cast<T*>(p_); }
  std::size_t bytes() const { return n_; }
 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace gtb::cuda
