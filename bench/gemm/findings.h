// Family-level GEMM results computed from finished records: best rate per precision and percent
// of it, speedup and memory saved over FP32 per shape class, cuBLAS vs cuBLASLt, GPU vs CPU per
// precision, and misaligned vs aligned shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtb/evidence.h"
#include "gtb/record.h"

namespace gtb::gemm {

// A GEMM problem size: C[m x n] = A[m x k] * B[k x n].
struct Dims {
  std::int64_t m = 0, n = 0, k = 0;
};

// The fastest record of a backend and precision (over libraries, shapes and cache states).
struct BestRate {
  std::string backend, precision;
  Dims shape;
  double tflops = 0;
  std::string variant, l2;
};

// A precision's rate over FP32's on the same shapes of one class, warm caches.
struct SpeedupOverFp32 {
  std::string backend, shape_class, precision;
  std::size_t shapes = 0;
  double geomean = 0, min = 0, max = 0;
  double operand_bytes_fp32 = 0, operand_bytes = 0, memory_saved_pct = 0;
};

// cuBLAS and cuBLASLt on one shape: each library's rate (by variant name) and the faster one.
struct LibraryChoice {
  Dims shape;
  std::string precision, l2;
  std::vector<std::pair<std::string, double>> tflops;  // variant -> TFLOP/s, by variant name
  std::string faster;
};

struct GpuVsCpu {
  Dims shape;
  std::string precision;
  double gpu_tflops = 0, cpu_tflops = 0, gpu_over_cpu = 0;
};

// A misaligned shape against its neighbour with every dimension rounded to a multiple of 64.
struct Alignment {
  Dims shape;
  std::string backend, precision;
  Dims aligned;
  double tflops = 0, aligned_tflops = 0, ratio = 0;
};

// What findings.gemm holds, in the order it is written.
struct Findings {
  std::vector<BestRate> best_rate;                         // by backend, then precision
  std::vector<std::pair<std::string, double>> pct_of_best;  // record id -> percent of its best rate
  std::vector<SpeedupOverFp32> speedup_over_fp32;
  std::vector<LibraryChoice> library_choice;
  std::vector<GpuVsCpu> gpu_vs_cpu_same_precision;
  std::vector<Alignment> alignment;
  // matmul per backend and precision: FLOP/s by m, n, k, the fastest verified library per shape
  // (warm caches, as in a training step).
  std::vector<cost::Term> terms;
};

// Reads only ok records of workload "gemm".
Findings compute_findings(const std::vector<Record>& records);
// Writes `found` as findings.gemm's data.
void to_json(const Findings& found, json& data);

}  // namespace gtb::gemm
