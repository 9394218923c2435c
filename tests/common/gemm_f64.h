// The float64 check of a CPU GEMM library's SGEMM and BF16 GEMM: random operands with their
// bfloat16 roundings, and the worst error of a result against float64 products of either. The MKL
// and oneDNN 3 tests check their libraries with it, in every transposition.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/cpu/mkl.h"  // to_bf16_rows, from_bf16
#include "kernels/common/random.h"

namespace gtb::test {

// Operands of na and nb elements from normal seeds, rounded to bfloat16 (a16, b16), and both as
// float64: unrounded (ad, bd) and rounded (ar, br).
struct GemmOperands {
  std::vector<float> a, b;
  std::vector<std::uint16_t> a16, b16;
  std::vector<double> ad, bd, ar, br;
};

inline GemmOperands gemm_operands(std::size_t na, std::size_t nb, std::uint64_t seed_a, std::uint64_t seed_b) {
  GemmOperands o;
  o.a.resize(na), o.b.resize(nb);
  gtb::fill_normal(o.a.data(), na, seed_a);
  gtb::fill_normal(o.b.data(), nb, seed_b);
  o.a16.resize(na), o.b16.resize(nb);
  gtb::cpu::to_bf16_rows(o.a.data(), 1, int(na), int(na), o.a16.data());
  gtb::cpu::to_bf16_rows(o.b.data(), 1, int(nb), int(nb), o.b16.data());
  o.ad.assign(o.a.begin(), o.a.end()), o.bd.assign(o.b.begin(), o.b.end());
  for (std::uint16_t h : o.a16) o.ar.push_back(gtb::cpu::from_bf16(h));
  for (std::uint16_t h : o.b16) o.br.push_back(gtb::cpu::from_bf16(h));
  return o;
}

// max |C - ref| / sum |terms| over the m x n result C (rows ldc apart), ref in float64 from the
// given operands (row-major, transposed as ta and tb say, packed: lda = ta ? m : k, ldb = tb ? k : n).
inline double worst_relative(const std::vector<float>& c, int ldc, const std::vector<double>& a,
                             const std::vector<double>& b, int m, int n, int k, bool ta, bool tb) {
  const int lda = ta ? m : k, ldb = tb ? k : n;
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double r = 0, bound = 0;
      for (int p = 0; p < k; ++p) {
        const double t = (ta ? a[std::size_t(p) * lda + i] : a[std::size_t(i) * lda + p]) *
                         (tb ? b[std::size_t(j) * ldb + p] : b[std::size_t(p) * ldb + j]);
        r += t, bound += std::fabs(t);
      }
      worst = std::max(worst, std::fabs(r - c[std::size_t(i) * ldc + j]) / bound);
    }
  return worst;
}

}  // namespace gtb::test
