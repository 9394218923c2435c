// The N-rank data-parallel step projected from a measured one-rank step and an all-reduce busbw.
#pragma once

#include <algorithm>
#include <stdexcept>

#include "kernels/parallel/collective.h"

namespace gtb::parallel {

// A ring all-reduce moves gradient_bytes * 2(n-1)/n through each rank's link, which busbw measures
// (nccl-tests' definition), so the communication takes that over busbw. Without overlap it adds to
// the compute; with perfect overlap the step is the longer of the two. Bucket latencies are ignored.
struct StepProjection {
  double comm_s = 0;
  double step_no_overlap_s = 0, step_full_overlap_s = 0;
  double efficiency_no_overlap = 0, efficiency_full_overlap = 0;  // one-rank step / projected step
};
inline StepProjection project_step(double compute_s, double gradient_bytes, int ranks, double busbw_gbps) {
  if (!(compute_s > 0) || !(gradient_bytes > 0) || ranks < 2 || !(busbw_gbps > 0))
    throw std::invalid_argument("project_step: needs compute > 0 s, gradient bytes > 0, ranks >= 2, busbw > 0 GB/s");
  StepProjection p;
  p.comm_s = gradient_bytes * bus_factor(Collective::all_reduce, ranks) / (busbw_gbps * 1e9);
  p.step_no_overlap_s = compute_s + p.comm_s;
  p.step_full_overlap_s = std::max(compute_s, p.comm_s);
  p.efficiency_no_overlap = compute_s / p.step_no_overlap_s;
  p.efficiency_full_overlap = compute_s / p.step_full_overlap_s;
  return p;
}

}  // namespace gtb::parallel
