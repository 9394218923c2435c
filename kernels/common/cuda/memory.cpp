// RAII owners of CUDA streams, events, device and pinned memory.
#include "kernels/common/cuda/memory.h"

#include <utility>

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

DeviceBuffer::DeviceBuffer(std::size_t bytes) : n_(bytes) {
  if (bytes) GTB_CUDA_CHECK(cudaMalloc(&p_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = std::exchange(o.p_, nullptr);
    n_ = std::exchange(o.n_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, unsigned flags) : n_(bytes) {
  if (bytes) GTB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, flags));
}
PinnedBuffer::~PinnedBuffer() {
  if (p_) cudaFreeHost(p_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFreeHost(p_);
    p_ = std::exchange(o.p_, nullptr);
    n_ = std::exchange(o.n_, 0);
  }
  return *this;
}

}  // namespace gtb::cuda
