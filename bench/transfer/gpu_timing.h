// How the transfer family times its GPU cases through the harness (bench and GPU tests share it).
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cstdint>

#include "harness/runtime/cuda_timing.h"
#include "harness/runtime/host_timing.h"
#include "kernels/transfer/cuda/transfer.h"

namespace gtb::transfer_timing {

// Device seconds of `reps` copies queued back to back between the region's two events.
inline double copy_device(cuda::transfer::CopyCase& c, std::int64_t reps) {
  cuda::EventTiming how;
  how.blocking = c.host_staged() ? Blocking::forbidden : Blocking::allowed;
  how.ops_per_rep = c.ops_per_rep();
  cuda::TimedRegion region(c.stream(), reps, how);
  c.enqueue_reps(reps, region.start_event().get());
  return region.finish();
}

// Host wall seconds of `reps` x (API call + synchronize).
inline double copy_host(cuda::transfer::CopyCase& c, std::int64_t reps) {
  return time_host(reps, [&] { c.run_once(); });
}

// Device seconds of `reps` passes of the overlap pipeline (see OverlapCase::enqueue_pipeline).
inline double overlap_device(cuda::transfer::OverlapCase& c, std::int64_t reps, bool copies = true,
                             bool compute = true, bool overlapped = true) {
  cuda::EventTiming how;
  how.ops_per_rep = c.pipeline_ops(copies, compute, overlapped);
  return cuda::time_events(
      c.stream(), reps, [&](cudaStream_t) { c.enqueue_pipeline(copies, compute, overlapped); }, how);
}

// One pipeline's worth of every chunk's copies (serial), and of every chunk's kernel: the reference
// times of the overlap fraction.
inline double overlap_copy_only(cuda::transfer::OverlapCase& c) { return overlap_device(c, 1, true, false, false); }
inline double overlap_compute_only(cuda::transfer::OverlapCase& c) { return overlap_device(c, 1, false, true, false); }

}  // namespace gtb::transfer_timing
