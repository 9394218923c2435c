// The parallel family's derived results: busbw at the largest size, the plain-loop yardstick, and
// for the data-parallel step the best bucket, the overlap gain, the communication fraction and
// scaling; apart, the N-rank and N-GPU steps projected from the measured one-rank step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"
#include "kernels/parallel/projection.h"

namespace gtb::parallel {

// A collective at its largest size, per variant, collective and dtype.
struct LargestSize {
  std::string record;
  std::int64_t bytes = 0;
  double algbw_gbps = 0, busbw_gbps = 0;
  int ranks = 0;
};

// gtb's MPI all-reduce against a plain MPI_Allreduce loop of the same size in the same run.
struct VsPlainLoop {
  static constexpr double kTarget = 0.9;
  std::int64_t bytes = 0;
  double measured_gbps = 0, plain_loop_gbps = 0, ratio = 0;
  bool met() const { return ratio >= kTarget; }
};

// The best data-parallel step of one overlap setting.
struct OverlapBest {
  std::string overlap;  // "on", "off"
  std::string record;
  double best_bucket_mb = 0, throughput = 0, comm_fraction = 0;
};

// N ranks' throughput over N times one rank's with the same per-rank resources.
struct Scaling {
  double value = 0;
  double ranks = 0;
  double one_rank_throughput = 0;
};

// The data-parallel step of one model and backend.
struct DpStep {
  std::string backend;
  std::int64_t width = 0, depth = 0, rows_per_rank = 0;
  std::vector<OverlapBest> best;  // by overlap setting
  std::optional<double> overlap_gain;
  std::string overlap_note;  // set when overlap made the step slower
  std::optional<Scaling> scaling_efficiency;
  const OverlapBest* at(const std::string& overlap) const;
};

// What a projection divides by and where it came from.
struct ProjectionInputs {
  int ranks = 0;  // ranks or GPUs
  double busbw_gbps = 0;
  std::string busbw_source;
  double one_step_s = 0;   // the measured one-rank (one-GPU) step
  std::string one_record;  // its record
  double gradient_bytes = 0;
};

// The N-rank CPU step projected from the measured one-rank step: never a measurement.
struct ProjectedCpu {
  std::int64_t width = 0, depth = 0, rows_per_rank = 0;
  ProjectionInputs inputs;
  StepProjection step;
};
inline constexpr const char* kProjectedMethod =
    "step = one-rank step + gradient_bytes * 2(n-1)/n / busbw (no overlap), or the larger of the two (full "
    "overlap); not measured";

// The N-GPU step projected from the measured one-GPU step: never a measurement.
struct ProjectedGpu {
  json params;
  ProjectionInputs inputs;
  StepProjection step;
};
inline constexpr const char* kProjectedGpuMethod =
    "N-GPU step = measured one-GPU step + gradient_bytes * 2(n-1)/n / busbw (every bucket's ring all-reduce, no "
    "overlap), or the larger of the two (full overlap); bucket latencies ignored; not measured";

// A collective whose busbw falls far below the all-reduce's at the same size and backend.
struct CollectiveNote {
  std::string record, all_reduce_record;
  double ratio = 0;
  std::string note;
};

// One GPU: backward alone and with a bucket-sized reduction in flight.
struct Interference {
  json params;
  double backward_ms_alone = 0, backward_ms_with_reduction = 0, slowdown = 0;
};

// findings.parallel holds each non-empty part under its name: largest_size, vs_plain_loop, dp_step,
// projected, projected_gpu, collective_notes, interference (the projections as {label, method,
// rows}, every row labelled "projected"). Only ok records take part. The cost model's evidence:
// allreduce (seconds by bytes, per rank count) and comm_overlap (fraction hidden) terms per backend,
// the data-parallel steps measured, and the pairs among them (the all-reduce overlapped with the
// backward pass against blocking).
struct Findings : cost::Evidence {
  std::vector<LargestSize> largest_size;
  std::optional<VsPlainLoop> vs_plain_loop;
  std::vector<DpStep> dp_step;
  std::vector<ProjectedCpu> projected;
  std::vector<ProjectedGpu> projected_gpu;
  std::vector<CollectiveNote> collective_notes;
  std::vector<Interference> interference;
};
// The projections read GTB_PARALLEL_BUSBW_GBPS and GTB_PARALLEL_PROJECT_RANKS (see docs/parallel.md).
Findings compute_findings(const std::vector<Record>& records);
void to_json(const Findings& found, json& data);

}  // namespace gtb::parallel
