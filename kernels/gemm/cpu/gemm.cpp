// CPU side of the GEMM family: OpenBLAS SGEMM, float64 references and the accuracy check.
#include "kernels/gemm/cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/random.h"

namespace gtb::cpu {

void gemm_sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
  sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

void gemm_naive_f64(const float* a, const float* b, double* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += double(a[std::size_t(i) * k + p]) * double(b[std::size_t(p) * n + j]);
      c[std::size_t(i) * n + j] = s;
    }
}

std::vector<int> gemm_check_rows(int m, int max_rows, std::uint64_t seed) {
  if (m <= 0 || max_rows <= 0) throw std::invalid_argument("gemm_check_rows: m and max_rows must be positive");
  std::vector<int> rows;
  if (m <= max_rows) {
    for (int i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  // Edge rows sit in the last, partial tile: a kernel that mishandles the remainder shows there.
  std::vector<char> taken(static_cast<std::size_t>(m), 0);
  taken[0] = taken[static_cast<std::size_t>(m - 1)] = 1;
  int count = 2;
  for (std::uint64_t i = 0; count < max_rows; ++i) {
    const int r = static_cast<int>(uniform01(seed, i) * m) % m;
    if (!taken[static_cast<std::size_t>(r)]) taken[static_cast<std::size_t>(r)] = 1, ++count;
  }
  for (int i = 0; i < m; ++i)
    if (taken[static_cast<std::size_t>(i)]) rows.push_back(i);
  return rows;
}

std::vector<double> gemm_reference_rows(const float* a, const float* b, int n, int k, const std::vector<int>& rows) {
  const int r = static_cast<int>(rows.size());
  std::vector<double> ad(std::size_t(r) * k), bd(std::size_t(k) * n), c(std::size_t(r) * n);
  for (int i = 0; i < r; ++i)
    for (int p = 0; p < k; ++p) ad[std::size_t(i) * k + p] = a[std::size_t(rows[i]) * k + p];
  for (std::size_t i = 0; i < bd.size(); ++i) bd[i] = b[i];
  dgemm(false, false, r, n, k, 1.0, ad.data(), k, bd.data(), n, 0.0, c.data(), n);
  return c;
}

GemmCheck check_gemm(const float* c, int m, int n, const std::vector<int>& rows, const std::vector<double>& ref_rows,
                     double tolerance) {
  if (ref_rows.size() != rows.size() * std::size_t(n))
    throw std::invalid_argument("check_gemm: reference has " + std::to_string(ref_rows.size()) + " values, expected " +
                                std::to_string(rows.size() * std::size_t(n)));
  GemmCheck out;
  out.tolerance = tolerance;
  out.rows_checked = rows.size();
  const std::size_t total = std::size_t(m) * std::size_t(n);
  std::size_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(total); ++i) bad += std::isfinite(c[i]) ? 0 : 1;
  out.nonfinite = bad;
  std::vector<float> got(rows.size() * std::size_t(n));
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(c + std::size_t(rows[i]) * n, n, got.begin() + static_cast<std::ptrdiff_t>(i * std::size_t(n)));
  const ErrorReport rep = compare_relative_norm(got.data(), ref_rows.data(), got.size(), tolerance);
  out.rel_fro_err = rep.rel_fro_err;
  out.ok = rep.ok && bad == 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "rel_fro_err %.3e (tolerance %.1e) over %zu of %d rows; %zu non-finite of %zu",
                rep.rel_fro_err, tolerance, rows.size(), m, bad, total);
  out.detail = buf;
  if (!rep.ok) out.detail += "; " + rep.detail;
  return out;
}

}  // namespace gtb::cpu
