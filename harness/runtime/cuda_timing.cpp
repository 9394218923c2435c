// CUDA event timing: the timed region around a sample, with the blocking kernel in front of it.
#include "gtb/cuda_timing.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "harness/runtime/cuda_blocking.h"
#include "gtb/gtb.h"
#include "harness/runtime/stopping.h"

namespace gtb::cuda {

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

const SampleSet& exec(State& st, cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how) {
  return detail::sample(st, Clock::cuda_event,
                        [&](std::int64_t reps) { return time_events(stream, reps, enqueue, how); });
}

const SampleSet& exec_each(State& st, cudaStream_t stream, const Enqueue& enqueue, const AroundEachRep& around,
                           const EventTiming& how) {
  return detail::sample(st, Clock::cuda_event, [&](std::int64_t reps) {
    DeviceTimingLog& log = device_timing_log();
    const std::size_t first = log.size();
    double total = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      if (around.before) around.before(stream);
      total += time_events(stream, 1, enqueue, how);
      if (around.after) around.after();
    }
    log.combine_since(first);
    return total;
  });
}

const SampleSet& exec_cold_l2(State& st, cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how) {
  L2Flusher flusher;
  return exec_each(st, stream, enqueue, {[&](cudaStream_t s) { flusher.flush(s); }, nullptr}, how);
}

double probe(cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how, const ProbeRule& rule) {
  if (rule.samples < 1 || rule.reps < 0) throw std::invalid_argument("invalid probe rule");
  const std::int64_t reps = std::max<std::int64_t>(1, rule.reps);
  std::vector<double> per_rep;
  for (int i = 0; i < rule.samples; ++i) per_rep.push_back(time_events(stream, reps, enqueue, how) / double(reps));
  return median(per_rep);
}

DeviceTimer event_timer() {
  return [](cudaStream_t stream, std::int64_t reps, bool may_hold, std::int64_t ops_per_rep,
            const std::function<void(cudaStream_t)>& enqueue) {
    return time_events(stream, reps, enqueue, {may_hold ? Blocking::allowed : Blocking::forbidden, ops_per_rep});
  };
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
