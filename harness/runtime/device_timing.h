// How a device-clock record was timed: when to hold the stream with a blocking kernel, and the
// per-record summary (blocked or not, block timeouts, host enqueue time against device time).
// Host code only, so that the decisions are tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/document/types.h"

namespace gtb {

// Whether the timed work may sit behind a blocking kernel. `forbidden`: something in it waits for
// the stream on the host (a copy from pageable memory is staged synchronously by the driver, and
// cudaMalloc, cudaMemcpy or a graph upload synchronise too): behind a held stream it would wait for
// a kernel that waits for the host, until the kernel's timeout. A kernel's first launch may load
// its module lazily, which can wait for the context too: the verify-then-measure protocol runs the
// work once before any timed sample, so a held stream never meets a first launch.
enum class Blocking { allowed, forbidden };

struct BlockingPlan {
  bool use = false;
  std::string reason;  // why not, when use is false
};

// At most this many operations are queued behind the blocking kernel. A stream's launch queue holds
// about a thousand entries; once it is full the next launch waits on the host, for a kernel that
// waits for the host. With this many operations queued the device is ahead of the host anyway.
constexpr std::int64_t kMaxOpsBehindBlock = 500;

// The blocking kernel gives up after this long (a bug must not hang the GPU); the sample is then
// timed as if unblocked and the record says so.
constexpr double kBlockTimeoutSeconds = 1.0;

// Decides how the next sample is timed. `ops_per_rep`: operations one repetition enqueues (kernels,
// copies, graph launches); `timeouts_so_far`: block timeouts already seen in this record (after one,
// the record stops blocking rather than pay the timeout on every sample).
BlockingPlan plan_blocking(Blocking allowed, std::int64_t reps, std::int64_t ops_per_rep, int timeouts_so_far);

// What one device-clock sample saw, in seconds for all its repetitions.
struct DeviceSample {
  double device_seconds = 0;   // between the events
  double enqueue_seconds = 0;  // host time to queue the repetitions (between the two event records)
  std::int64_t reps = 1;
  bool blocked = false;
  bool block_timed_out = false;
  std::string not_blocked_reason;
};

// Collects the samples of one measurement (calibration and warm-up included; the summary reads
// only the last `kept` ones, which are the kept samples).
class DeviceTimingLog {
 public:
  void clear() { samples_.clear(); }
  void add(DeviceSample s) { samples_.push_back(std::move(s)); }
  bool empty() const { return samples_.empty(); }
  std::size_t size() const { return samples_.size(); }
  // A sampler that times one sample as several regions (the cold-L2 GEMM: one region per repetition,
  // each after an untimed L2 flush) folds them into one entry, so that summary(kept) reads every kept
  // sample, not the last `kept` repetitions. `first` is size() before the sample's first region.
  // Times and repetitions add up; the sample is blocked when every region was, timed out when one did.
  void combine_since(std::size_t first);
  int timeouts() const;
  // The record's `device_timing` object (docs/results-format.md).
  json summary(std::size_t kept) const;

 private:
  std::vector<DeviceSample> samples_;
};

// The log of the measurement running on this thread; time_events() writes to it, the State that runs
// the measurement reads it.
DeviceTimingLog& device_timing_log();

// `device_timing` of a device-clock record whose sampler kept its own events (nothing was logged).
json device_timing_unlogged();

}  // namespace gtb
