// The train family's derived results: crossovers, graph and mixed-precision speedups, from records.
#pragma once

#include <optional>
#include <vector>

#include "harness/document/types.h"

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

// All train findings from the finished records (ok records only):
//  crossover_batch[]: per GPU configuration of batch_sweep (options + width/depth), the crossover
//    batch and the points it was computed from;
//  gpu_slower_below[]: per depth and GPU mode of model_sweep, the largest width/parameter count at
//    which the GPU is slower than the CPU;
//  graph_speedup[]: graph over eager samples/s per model_sweep shape;
//  mixed_precision[]: fp16/bf16/tf32 over fp32 samples/s and device memory saved, per shape;
//  largest_width_tflops: achieved TFLOP/s of the widest model_sweep/precision GPU records.
json findings_from_records(const std::vector<Record>& records);

}  // namespace gtb::mlp
