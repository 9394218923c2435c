// Records a GEMM accuracy check on its case (the check itself is kernels/gemm/cpu/gemm.h's check_gemm).
#pragma once

#include <cstddef>
#include <vector>

#include "gtb/gtb.h"

namespace gtb::gemm {

// Runs gtb::cpu::check_gemm and records it on the case: st.check (a failure makes the record
// `invalid`), counters rel_fro_err and tolerance, and the figures in record.check. Returns whether it
// passed.
bool record_gemm_check(gtb::State& st, const float* c, int m, int n, const std::vector<int>& rows,
                       const std::vector<double>& ref_rows, double tolerance);

// The sequence's SGD-with-momentum update against float64, parameter by parameter: from the weights
// w0 and momentum v0 before it and the gradients g, v = mu v0 + g and w = w0 - lr v; the momentum
// within 1e-5 and the weight within 1e-6 of |x| + 1. The index of the first wrong (or non-finite)
// parameter, or -1 when every one is right. Throws std::invalid_argument on sizes that differ.
long first_wrong_sgd_update(const std::vector<float>& w0, const std::vector<float>& v0, const float* g,
                            const std::vector<float>& w, const std::vector<float>& v, float lr, float mu);

}  // namespace gtb::gemm
