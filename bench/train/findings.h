// The train family's derived results: crossovers, graph and mixed-precision speedups, from records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::mlp {

// One x position (batch size, parameter count) with the CPU's and the GPU's rate (higher is better).
struct RatePoint {
  double x = 0;
  double cpu = 0;
  double gpu = 0;
};

// The crossover: the smallest x from which the GPU's rate is above the CPU's at that x and at every
// larger x measured. Empty when the GPU is not ahead at the largest x. Points may come unsorted;
// points lacking either rate (<= 0) are ignored.
std::optional<double> crossover(std::vector<RatePoint> points);

// The largest x at which the GPU is still slower than the CPU (the "below this the GPU loses"
// threshold): empty when the GPU is never slower.
std::optional<double> last_gpu_loss(std::vector<RatePoint> points);

// Per GPU configuration of batch_sweep (options + width/depth): the crossover batch and the points it
// was computed from (sorted, usable only).
struct CrossoverBatch {
  json options;
  int width = -1, depth = -1;
  std::optional<double> crossover_batch;
  std::vector<RatePoint> points;
};

// Per depth, batch and GPU options of model_sweep: the largest width (and its parameter count) at
// which the GPU is slower than the CPU, and the crossover width.
struct GpuSlowerBelow {
  json options;
  int batch = -1, depth = -1;
  std::optional<double> up_to_width;
  double up_to_parameters = 0;  // meaningful with up_to_width
  std::optional<double> crossover_width;
  std::vector<RatePoint> points;
};

// Graph over eager samples/s at one model_sweep shape.
struct GraphSpeedup {
  json params;
  double graph_samples_per_s = 0, eager_samples_per_s = 0, speedup = 0;
  int paired_rounds = 0;  // > 0: the speedup from the two records' paired rounds (measured as a pair)
};

// fp16/bf16/tf32 over fp32 samples/s at one shape and optimizer, on the CPU or the GPU, with the
// device memory saved when both peaks were counted.
struct MixedPrecision {
  Backend backend = Backend::cuda;
  json params, options;  // options: the low precision record's
  std::string precision;
  double speedup_over_fp32 = 0;
  int paired_rounds = 0;  // > 0: the speedup from the two records' paired rounds (measured as a pair)
  std::optional<double> memory_saved_fraction;  // with the two peaks below
  double peak_device_bytes_fp32 = 0, peak_device_bytes = 0;
  std::optional<double> skipped_steps;
};

// Achieved TFLOP/s of one of the widest GPU records.
struct WidestTflops {
  std::string workload;
  json params, options;
  double tflops = 0;
};

// All train findings from the finished records (ok records only); findings.train holds each
// non-empty list under its name: crossover_batch, gpu_slower_below, graph_speedup,
// mixed_precision, largest_width_tflops. The cost model's evidence: every usable step record as a
// measured step for its validation (no terms: the records are whole steps, what the model predicts),
// and the A/B pairs among them (one fix between two steps): precision fp32 -> bf16 / fp16 / tf32,
// micro-batches -> the whole batch at once, eager -> CUDA Graph, pageable -> pinned host memory.
struct Findings : cost::Evidence {
  std::vector<CrossoverBatch> crossover_batch;
  std::vector<GpuSlowerBelow> gpu_slower_below;
  std::vector<GraphSpeedup> graph_speedup;
  std::vector<MixedPrecision> mixed_precision;
  std::vector<WidestTflops> largest_width_tflops;
};
Findings compute_findings(const std::vector<Record>& records);
void to_json(const Findings& found, json& data);

}  // namespace gtb::mlp
