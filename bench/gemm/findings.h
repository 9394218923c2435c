// Family-level GEMM results computed from finished records: best rate per precision and percent
// of it, speedup and memory saved over FP32 per shape class, cuBLAS vs cuBLASLt, GPU vs CPU per
// precision, and misaligned vs aligned shapes.
#pragma once

#include <vector>

#include "harness/document/types.h"

namespace gtb::gemm {

// Fills `findings` (findings.gemm in the results file). Reads only ok records of workload "gemm".
void compute_findings(const std::vector<Record>& records, json& findings);

}  // namespace gtb::gemm
