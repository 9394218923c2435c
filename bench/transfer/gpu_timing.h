// How the transfer family hands its GPU work to the harness's timing (bench and GPU tests share it).
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cstdint>

#include "gtb/cuda_timing.h"
#include "gtb/host_timing.h"
#include "kernels/transfer/cuda/transfer.h"

namespace gtb::transfer_timing {

// Device seconds of `reps` copies queued back to back between the region's two events: the body of a
// self-timed batch (the copy case queues its repetitions itself, behind the region's start event).
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
  return batch_seconds(reps, [&] { c.run_once(); });
}

// One pass of the overlap pipeline (see OverlapCase::enqueue_pipeline) as the work of a repetition,
// and how its samples may be taken.
inline cuda::Enqueue overlap_pipeline(cuda::transfer::OverlapCase& c, bool copies = true, bool compute = true,
                                      bool overlapped = true) {
  return [&c, copies, compute, overlapped](cudaStream_t) { c.enqueue_pipeline(copies, compute, overlapped); };
}
inline cuda::EventTiming overlap_timing(cuda::transfer::OverlapCase& c, bool copies = true, bool compute = true,
                                        bool overlapped = true) {
  cuda::EventTiming how;
  how.ops_per_rep = c.pipeline_ops(copies, compute, overlapped);
  return how;
}

// Device seconds of `reps` passes of the pipeline, queued back to back in one region.
inline double overlap_device(cuda::transfer::OverlapCase& c, std::int64_t reps, bool copies = true,
                             bool compute = true, bool overlapped = true) {
  return double(reps) * cuda::probe(c.stream(), overlap_pipeline(c, copies, compute, overlapped),
                                    overlap_timing(c, copies, compute, overlapped), ProbeRule{1, 0.02, reps});
}

// One pipeline's worth of every chunk's copies (serial), and of every chunk's kernel: the reference
// times of the overlap fraction, each the median of `samples` single passes.
inline double overlap_copy_only(cuda::transfer::OverlapCase& c, int samples = 1) {
  return cuda::probe(c.stream(), overlap_pipeline(c, true, false, false), overlap_timing(c, true, false, false),
                     ProbeRule{samples, 0.02, 1});
}
inline double overlap_compute_only(cuda::transfer::OverlapCase& c, int samples = 1) {
  return cuda::probe(c.stream(), overlap_pipeline(c, false, true, false), overlap_timing(c, false, true, false),
                     ProbeRule{samples, 0.02, 1});
}

}  // namespace gtb::transfer_timing
