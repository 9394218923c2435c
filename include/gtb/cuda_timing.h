// GPU-side timing with CUDA events (the stream, event and memory owners are kernels/common/cuda/memory.h).
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include <cuda_runtime_api.h>

#include "harness/runtime/device_timing.h"
#include "gtb/gtb.h"
#include "kernels/common/cuda/check.h"
#include "kernels/common/cuda/memory.h"
#include "kernels/common/cuda/timer.h"

namespace gtb::cuda {

// How a device-clock sample may be taken (harness/device_timing.h decides from it).
struct EventTiming {
  Blocking blocking = Blocking::allowed;  // forbidden when the work synchronises with the host
  std::int64_t ops_per_rep = 1;           // operations one repetition enqueues (kernels, copies, graphs)
};

// One device-clock sample. Construction holds `stream` with the blocking kernel (when plan_blocking
// allows it), records the start event behind it and starts the host's enqueue clock; the caller
// then queues the timed work; finish() records the end event, releases the stream, waits for the
// end, logs the sample in device_timing_log() and returns the device seconds. Without the block, a
// start event recorded on an empty queue fires at once and the events time the host's enqueue
// whenever it is slower than the work.
class TimedRegion {
 public:
  TimedRegion(cudaStream_t stream, std::int64_t reps, const EventTiming& how = {});
  ~TimedRegion();  // releases the stream and waits for it if finish() was not reached
  TimedRegion(const TimedRegion&) = delete;
  TimedRegion& operator=(const TimedRegion&) = delete;
  const Event& start_event() const;  // for other streams that must also wait for the start
  double finish();

 private:
  void release() noexcept;
  cudaStream_t stream_;
  DeviceSample sample_;
  double t0_ = 0;
  bool finished_ = false;
};

// A TimedRegion around `reps` calls of enqueue(stream): one device-clock sample. The harness's exec
// forms below take their samples with it; a case uses exec(), not this.
double time_events(cudaStream_t stream, std::int64_t reps, const std::function<void(cudaStream_t)>& enqueue,
                   const EventTiming& how = {});

using Enqueue = std::function<void(cudaStream_t)>;

// The device-clock form of State::exec(): the harness calibrates, warms up and samples; each sample
// is one TimedRegion around `reps` calls of enqueue(stream) (Clock::cuda_event). Refused before
// check() and after a failed check, as every exec is.
const SampleSet& exec(State& st, cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how = {});

// Work around each timed repetition that stays out of the time: before(stream) runs ahead of the
// repetition's region (an L2 flush, collectives that contend on another stream), after() once the
// region has finished (waiting for those collectives).
struct AroundEachRep {
  Enqueue before;
  std::function<void()> after;
};
// As exec(), with every repetition in a TimedRegion of its own between the untimed work of
// `around`; the regions of one sample add up to the sample and are one entry of the record's
// device_timing.
const SampleSet& exec_each(State& st, cudaStream_t stream, const Enqueue& enqueue, const AroundEachRep& around,
                           const EventTiming& how = {});
// exec_each() with the L2 cache evicted before every repetition (L2Flusher): each one starts cold.
const SampleSet& exec_cold_l2(State& st, cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how = {});

// A reference figure beside a record (outside its samples): device seconds per repetition, the
// median of how.samples regions of how.reps repetitions (0: one) each. min_sample_seconds is unused.
double probe(cudaStream_t stream, const Enqueue& enqueue, const EventTiming& how, const ProbeRule& rule);

// time_events() as a DeviceTimer, for kernels that time work while they set themselves up.
DeviceTimer event_timer();

// Evicts the L2 cache (NVBench's way: a memset over a buffer larger than L2) on `stream`.
class L2Flusher {
 public:
  L2Flusher();
  void flush(cudaStream_t stream);
 private:
  DeviceBuffer buf_;
};

}  // namespace gtb::cuda
