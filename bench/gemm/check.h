// Records a GEMM accuracy check on its case (the check itself is kernels/gemm/cpu/gemm.h's check_gemm).
#pragma once

#include <vector>

#include "harness/runtime/gtb.h"

namespace gtb::gemm {

// Runs gtb::cpu::check_gemm and records it on the case: st.check (a failure makes the record
// `invalid`), counters rel_fro_err and tolerance, and the figures in record.check. Returns whether it
// passed.
bool record_gemm_check(gtb::State& st, const float* c, int m, int n, const std::vector<int>& rows,
                       const std::vector<double>& ref_rows, double tolerance);

}  // namespace gtb::gemm
