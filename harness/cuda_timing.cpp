// CUDA event timing, checked-call errors and RAII owners of streams, events and memory.
#include "harness/cuda_timing.h"

#include <string>
#include <utility>

#include "harness/cuda_blocking.h"
#include "harness/gtb.h"
#include "harness/stopping.h"

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

namespace {

// Per thread, made once: creating events or pinned memory per sample costs more than short kernels
// take, and cudaHostAlloc synchronises, which must never happen while a stream is held.
struct RegionResources {
  Event start, end;
  PinnedBuffer flags{sizeof(BlockFlags), cudaHostAllocMapped};
  BlockFlags* host = flags.as<BlockFlags>();
  BlockFlags* device = nullptr;
  RegionResources() {
    void* d = nullptr;
    GTB_CUDA_CHECK(cudaHostGetDevicePointer(&d, flags.get(), 0));
    device = static_cast<BlockFlags*>(d);
  }
};
RegionResources& region_resources() {
  thread_local RegionResources r;
  return r;
}

}  // namespace

TimedRegion::TimedRegion(cudaStream_t stream, std::int64_t reps, const EventTiming& how) : stream_(stream) {
  RegionResources& r = region_resources();
  const BlockingPlan plan = plan_blocking(how.blocking, reps, how.ops_per_rep, device_timing_log().timeouts());
  sample_.reps = reps;
  sample_.blocked = plan.use;
  sample_.not_blocked_reason = plan.reason;
  if (plan.use) {
    __atomic_store_n(&r.host->release, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r.host->timed_out, 0, __ATOMIC_SEQ_CST);
    launch_block_stream(r.device, kBlockTimeoutSeconds, stream_);
  } else {
    finished_ = true;  // nothing to release
  }
  r.start.record(stream_);
  t0_ = host_seconds();
}

const Event& TimedRegion::start_event() const { return region_resources().start; }

void TimedRegion::release() noexcept {
  if (sample_.blocked) __atomic_store_n(&region_resources().host->release, 1, __ATOMIC_SEQ_CST);
}

TimedRegion::~TimedRegion() {
  if (finished_) return;
  // An exception while enqueuing: let the kernel go and wait for it, so that the next sample's
  // flags are not reset under a kernel that still polls them.
  release();
  (void)cudaStreamSynchronize(stream_);
}

double TimedRegion::finish() {
  RegionResources& r = region_resources();
  r.end.record(stream_);
  sample_.enqueue_seconds = host_seconds() - t0_;
  release();
  finished_ = true;
  sample_.device_seconds = elapsed_seconds(r.start, r.end);
  if (sample_.blocked) sample_.block_timed_out = __atomic_load_n(&r.host->timed_out, __ATOMIC_SEQ_CST) != 0;
  device_timing_log().add(sample_);
  return sample_.device_seconds;
}

double time_events(cudaStream_t stream, std::int64_t reps, const std::function<void(cudaStream_t)>& enqueue,
                   const EventTiming& how) {
  TimedRegion region(stream, reps, how);
  for (std::int64_t i = 0; i < reps; ++i) enqueue(stream);
  return region.finish();
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
