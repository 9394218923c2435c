// Output checks used before timing: poison, compare, and the error metrics with their text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gtb {

// Poison: a quiet-NaN pattern, so an output element that was never written fails every check.
void poison(float* x, std::size_t n);
void poison(double* x, std::size_t n);
void poison_bytes(void* p, std::size_t bytes);  // 0xA5 pattern; use a random source so it cannot match

struct ErrorReport {
  bool ok = false;
  double max_abs_err = 0;
  double max_rel_err = 0;    // |got - ref| / max(|ref|, floor)
  double rel_fro_err = 0;    // ||got - ref||_F / ||ref||_F (float64 accumulation)
  std::size_t first_bad = 0; // index of the first element over tolerance (or non-finite)
  std::size_t bad_count = 0;
  std::string detail;        // human-readable summary, always set
};

// Elementwise check: |got - ref| <= atol + rtol * |ref| for every element, and all finite.
ErrorReport compare_elementwise(const float* got, const double* ref, std::size_t n, double rtol, double atol);
ErrorReport compare_elementwise(const float* got, const float* ref, std::size_t n, double rtol, double atol);
// Normwise check: ||got - ref|| / ||ref|| <= tol, and all finite (GEMM accuracy).
ErrorReport compare_relative_norm(const float* got, const double* ref, std::size_t n, double tol);
// Byte-exact check of a copy; detail names the first differing offset.
ErrorReport compare_bytes(const void* got, const void* ref, std::size_t bytes);

}  // namespace gtb
