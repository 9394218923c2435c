// CUDA event timing, checked-call errors and RAII owners of streams, events and memory.
#include "harness/cuda_timing.h"

#include <string>
#include <utility>

#include "harness/gtb.h"

namespace gtb {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  std::string where = file;
  where = where.substr(where.find_last_of('/') + 1);
  const std::string msg = std::string(call) + ": " + cudaGetErrorString(code) + " (" + cudaGetErrorName(code) +
                          ") at " + where + ":" + std::to_string(line);
  if (code == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it so the next case starts clean
    throw OutOfMemory(msg);
  }
  throw CudaError(code, msg);
}

}  // namespace gtb

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

double elapsed_seconds(const Event& start, const Event& end) {
  end.sync();
  float ms = 0;
  GTB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return double(ms) * 1e-3;
}

double time_events(cudaStream_t stream, std::int64_t reps, const std::function<void(cudaStream_t)>& enqueue) {
  // Events are created once per thread and reused: creating them per sample costs more than short
  // kernels take.
  thread_local Event start, end;
  start.record(stream);
  for (std::int64_t i = 0; i < reps; ++i) enqueue(stream);
  end.record(stream);
  return elapsed_seconds(start, end);
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

L2Flusher::L2Flusher() {
  int dev = 0, l2 = 0;
  GTB_CUDA_CHECK(cudaGetDevice(&dev));
  GTB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  buf_ = DeviceBuffer(static_cast<std::size_t>(l2) * 2);
}
void L2Flusher::flush(cudaStream_t stream) {
  if (buf_.bytes()) GTB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, buf_.bytes(), stream));
}

}  // namespace gtb::cuda
