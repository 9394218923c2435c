// Output checks: elementwise and normwise error against a reference, byte-exact copies, poisoning.
#include "kernels/common/verify.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace gtb {

namespace {
template <class T>
void poison_impl(T* x, std::size_t n) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const auto sn = static_cast<long long>(n);
#pragma omp parallel for schedule(static) if (sn > (1 << 16))
  for (long long i = 0; i < sn; ++i) x[i] = nan;
}
}  // namespace

void poison(float* x, std::size_t n) { poison_impl(x, n); }
void poison(double* x, std::size_t n) { poison_impl(x, n); }
void poison_bytes(void* p, std::size_t bytes) { std::memset(p, 0xA5, bytes); }

namespace detail {
void describe_elementwise(ErrorReport& e, std::size_t n, double rtol, double atol, double got_first, double ref_first) {
  std::ostringstream os;
  if (e.ok) {
    os << "all " << n << " elements within rtol " << rtol << ", atol " << atol << " (max abs err " << e.max_abs_err
       << ")";
  } else {
    os << e.bad_count << " of " << n << " elements outside rtol " << rtol << ", atol " << atol << "; first at index "
       << e.first_bad << ": got " << got_first << ", expected " << ref_first;
  }
  e.detail = os.str();
}
}  // namespace detail

ErrorReport compare_elementwise(const float* got, const double* ref, std::size_t n, double rtol, double atol) {
  return compare_elementwise_fn(got, n, rtol, atol, [ref](std::size_t i) { return ref[i]; });
}
ErrorReport compare_elementwise(const float* got, const float* ref, std::size_t n, double rtol, double atol) {
  return compare_elementwise_fn(got, n, rtol, atol, [ref](std::size_t i) { return double(ref[i]); });
}

ErrorReport compare_relative_norm(const float* got, const double* ref, std::size_t n, double tol) {
  ErrorReport e;
  double num = 0, den = 0;
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i];
    if (!std::isfinite(g)) {
      if (finite) e.first_bad = i;
      finite = false;
      ++e.bad_count;
      continue;
    }
    const double d = g - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    e.max_abs_err = std::max(e.max_abs_err, std::fabs(d));
  }
  e.rel_fro_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  e.ok = finite && e.rel_fro_err <= tol;
  std::ostringstream os;
  if (!finite)
    os << e.bad_count << " non-finite outputs (first at index " << e.first_bad << ")";
  else
    os << "relative error ||C - C_ref|| / ||C_ref|| = " << e.rel_fro_err << (e.ok ? " <= " : " > ")
       << "tolerance " << tol;
  e.detail = os.str();
  return e;
}

ErrorReport compare_bytes(const void* got, const void* ref, std::size_t bytes) {
  ErrorReport e;
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* r = static_cast<const unsigned char*>(ref);
  if (std::memcmp(g, r, bytes) == 0) {
    e.ok = true;
    e.detail = "all " + std::to_string(bytes) + " bytes match";
    return e;
  }
  for (std::size_t i = 0; i < bytes; ++i) {
    if (g[i] != r[i]) {
      if (e.bad_count == 0) e.first_bad = i;
      ++e.bad_count;
    }
  }
  e.detail = std::to_string(e.bad_count) + " of " + std::to_string(bytes) + " bytes differ; first at offset " +
             std::to_string(e.first_bad);
  return e;
}

}  // namespace gtb
