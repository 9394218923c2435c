// CPU side of the GEMM family: OpenBLAS SGEMM in row-major form, the float64 references (naive and
// row-sampled DGEMM) and the accuracy check every GEMM record runs before it is timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/verify.h"

namespace gtb::cpu {

// C[m x n] = A[m x k] * B[k x n] (row-major) through OpenBLAS with its configured threads.
void gemm_sgemm(const float* a, const float* b, float* c, int m, int n, int k);

// Textbook triple loop in float64: the independent reference the tests hold OpenBLAS to.
void gemm_naive_f64(const float* a, const float* b, double* c, int m, int n, int k);

// The rows the accuracy check compares: all of them when m <= max_rows, otherwise max_rows
// distinct rows drawn from `seed` (sorted), always including the first and last row.
std::vector<int> gemm_check_rows(int m, int max_rows, std::uint64_t seed);

// Float64 reference of the selected rows of A*B (OpenBLAS DGEMM on the gathered rows):
// result[i * n + j] is row rows[i].
std::vector<double> gemm_reference_rows(const float* a, const float* b, int n, int k, const std::vector<int>& rows);

struct GemmCheck {
  bool ok = false;
  double rel_fro_err = 0;       // over the checked rows
  double tolerance = 0;
  std::size_t rows_checked = 0;
  std::size_t nonfinite = 0;    // over the whole of C (catches never-written, poisoned elements)
  std::string detail;
};

// ||C_rows - ref||_F / ||ref||_F <= tolerance, and every element of C finite.
GemmCheck check_gemm(const float* c, int m, int n, const std::vector<int>& rows, const std::vector<double>& ref_rows,
                     double tolerance);

}  // namespace gtb::cpu
