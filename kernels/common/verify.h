// Output checks used before timing: poison, compare, and the error metrics with their text.
#pragma once

#include <cmath>
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
// The same check against a reference computed element by element, `ref(i)` = element i in float64:
// a large output needs no reference array (its memory and its page faults cost more than the check).
template <class Ref>
ErrorReport compare_elementwise_fn(const float* got, std::size_t n, double rtol, double atol, const Ref& ref);
// Normwise check: ||got - ref|| / ||ref|| <= tol, and all finite (GEMM accuracy).
ErrorReport compare_relative_norm(const float* got, const double* ref, std::size_t n, double tol);
// Byte-exact check of a copy; detail names the first differing offset.
ErrorReport compare_bytes(const void* got, const void* ref, std::size_t bytes);

namespace detail {
// Fills the summary text of an elementwise check once its counts are in.
void describe_elementwise(ErrorReport& e, std::size_t n, double rtol, double atol, double got_first, double ref_first);
}  // namespace detail

template <class Ref>
ErrorReport compare_elementwise_fn(const float* got, std::size_t n, double rtol, double atol, const Ref& ref) {
  // One pass over all threads (OpenMP where the caller is built with it); the first bad element is
  // the lowest index, whatever the thread count.
  double num = 0, den = 0, max_abs = 0, max_rel = 0;
  std::size_t bad = 0, first = n;
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static) reduction(+ : num, den, bad) reduction(max : max_abs, max_rel) \
    reduction(min : first)
  for (long long li = 0; li < sn; ++li) {
    const auto i = static_cast<std::size_t>(li);
    const double g = got[i], r = static_cast<double>(ref(i));
    const double d = std::fabs(g - r);
    if (!std::isfinite(g) || !(d <= atol + rtol * std::fabs(r))) {
      first = i < first ? i : first;
      ++bad;
    }
    if (std::isfinite(d)) {
      max_abs = d > max_abs ? d : max_abs;
      const double rel = d / std::fmax(std::fabs(r), 1e-30);
      max_rel = rel > max_rel ? rel : max_rel;
      num += d * d;
    }
    den += r * r;
  }
  ErrorReport e;
  e.max_abs_err = max_abs;
  e.max_rel_err = max_rel;
  e.rel_fro_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  e.bad_count = bad;
  e.first_bad = bad ? first : 0;
  e.ok = bad == 0;
  detail::describe_elementwise(e, n, rtol, atol, bad ? double(got[first]) : 0.0,
                               bad ? static_cast<double>(ref(first)) : 0.0);
  return e;
}

}  // namespace gtb
