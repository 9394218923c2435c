// The host clock: kernels that measure inside (per-stage busy time) and the harness read the same one.
#pragma once

#include <chrono>

namespace gtb {

// Monotonic host wall clock in seconds (std::chrono::steady_clock).
inline double host_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// The host seconds one call of `fn` takes: a part of a step timed inside it (a parallel pass's fork
// and join included), as the CPU steps time their pieces.
template <class Fn>
double seconds_of_call(Fn&& fn) {
  const double t0 = host_seconds();
  fn();
  return host_seconds() - t0;
}

}  // namespace gtb
