// RAII owners of CUDA streams, events, device and pinned memory.
#include "kernels/common/cuda/memory.h"

#include "kernels/common/cuda/check.h"

namespace gtb::cuda {

Stream::Stream() { GTB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}
void Stream::sync() const { GTB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

Event::Event(bool timing) {
  GTB_CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) const { GTB_CUDA_CHECK(cudaEventRecord(e_, s)); }
void Event::sync() const { GTB_CUDA_CHECK(cudaEventSynchronize(e_)); }

long long device_l2_bytes() {
  int dev = 0, bytes = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, dev) != cudaSuccess) {
    cudaGetLastError();  // a failed query leaves no error for the next call to find
    return 0;
  }
  return bytes;
}

double elapsed_seconds(const Event& start, const Event& end) {
  end.sync();
  float ms = 0;
  GTB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return double(ms) * 1e-3;
}

void* DeviceAllocator::allocate(std::size_t bytes) {
  void* p = nullptr;
  GTB_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void DeviceAllocator::release(void* p) noexcept { cudaFree(p); }

void* PinnedAllocator::allocate(std::size_t bytes, unsigned flags) {
  void* p = nullptr;
  GTB_CUDA_CHECK(cudaHostAlloc(&p, bytes, flags));
  return p;
}
void PinnedAllocator::release(void* p) noexcept { cudaFreeHost(p); }

}  // namespace gtb::cuda
