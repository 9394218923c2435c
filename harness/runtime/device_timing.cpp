// Decisions about blocking-kernel timing and the per-record summary of how device time was taken.
#include "harness/runtime/device_timing.h"

#include <algorithm>

#include "harness/document/stats.h"

namespace gtb {

BlockingPlan plan_blocking(Blocking allowed, std::int64_t reps, std::int64_t ops_per_rep, int timeouts_so_far) {
  BlockingPlan p;
  if (allowed == Blocking::forbidden) {
    p.reason = "the timed work synchronises with the host (e.g. a pageable copy)";
    return p;
  }
  if (timeouts_so_far > 0) {
    p.reason = "an earlier sample's blocking kernel timed out";
    return p;
  }
  const std::int64_t ops = std::max<std::int64_t>(reps, 1) * std::max<std::int64_t>(ops_per_rep, 1);
  if (ops > kMaxOpsBehindBlock) {
    p.reason = std::to_string(ops) + " queued operations would overflow the launch queue (limit " +
               std::to_string(kMaxOpsBehindBlock) + ")";
    return p;
  }
  p.use = true;
  return p;
}

void DeviceTimingLog::combine_since(std::size_t first) {
  if (first + 1 >= samples_.size()) return;  // nothing or one region: already one entry
  const auto begin = samples_.begin() + static_cast<std::ptrdiff_t>(first);
  DeviceSample all;
  all.reps = 0;
  all.blocked = true;
  for (auto it = begin; it != samples_.end(); ++it) {
    all.device_seconds += it->device_seconds;
    all.enqueue_seconds += it->enqueue_seconds;
    all.reps += std::max<std::int64_t>(it->reps, 1);
    all.blocked = all.blocked && it->blocked;
    all.block_timed_out = all.block_timed_out || it->block_timed_out;
    if (!it->blocked && all.not_blocked_reason.empty()) all.not_blocked_reason = it->not_blocked_reason;
  }
  samples_.erase(begin, samples_.end());
  samples_.push_back(std::move(all));
}

int DeviceTimingLog::timeouts() const {
  return int(std::count_if(samples_.begin(), samples_.end(), [](const DeviceSample& s) { return s.block_timed_out; }));
}

json DeviceTimingLog::summary(std::size_t kept) const {
  json j = json::object();
  const std::size_t n = std::min(kept, samples_.size());
  const auto first = samples_.end() - static_cast<std::ptrdiff_t>(n);
  std::vector<double> dev, enq;
  std::size_t blocked = 0;
  std::string reason;
  for (auto it = first; it != samples_.end(); ++it) {
    const double reps = double(std::max<std::int64_t>(it->reps, 1));
    dev.push_back(it->device_seconds / reps);
    enq.push_back(it->enqueue_seconds / reps);
    if (it->blocked && !it->block_timed_out) ++blocked;
    if (!it->blocked && reason.empty()) reason = it->not_blocked_reason;
  }
  j["blocking_kernel"] = n > 0 && blocked == n ? "all" : blocked > 0 ? "some" : "none";
  j["blocked_samples"] = blocked;
  j["samples"] = n;
  if (blocked < n && !reason.empty()) j["not_blocked_reason"] = reason;
  j["block_timeouts"] = timeouts();
  if (n == 0) return j;
  const double dev_med = median(dev), enq_med = median(enq);
  j["device_s_median"] = dev_med;
  j["enqueue_s_median"] = enq_med;
  // Unblocked, events on an empty queue time the host's enqueue when it is the slower side: such a
  // figure is a launch rate, not the operation's device time. Blocked, the device time is right but
  // a loop of these operations would still run at the host's pace.
  const bool host_bound = enq_med >= dev_med;
  j["enqueue_bound"] = host_bound;
  if (host_bound)
    j["note"] = blocked == n ? "host enqueue time >= device time: in a loop the host, not the GPU, sets the pace"
                             : "host enqueue time >= device time and the stream was not held: the device clock "
                               "may have timed the host's launch rate";
  return j;
}

DeviceTimingLog& device_timing_log() {
  thread_local DeviceTimingLog log;
  return log;
}

json device_timing_unlogged() {
  return {{"blocking_kernel", "none"},
          {"not_blocked_reason", "the case records its own events around each operation"},
          {"block_timeouts", 0}};
}

}  // namespace gtb
