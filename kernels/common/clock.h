// The host clock: kernels that measure inside (per-stage busy time) and the harness read the same one.
#pragma once

#include <chrono>

namespace gtb {

// Monotonic host wall clock in seconds (std::chrono::steady_clock).
inline double host_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace gtb
