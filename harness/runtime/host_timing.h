// The host-clock timing loop: the body of a Clock::host_wall sampler is one call of time_host().
#pragma once

#include <cstdint>

#include "kernels/common/clock.h"

namespace gtb {

// Host wall seconds (host_seconds) for `reps` calls of fn(). A template, so that the loop around a
// short operation costs no indirect call.
template <class Fn>
double time_host(std::int64_t reps, Fn&& fn) {
  const double t0 = host_seconds();
  for (std::int64_t r = 0; r < reps; ++r) fn();
  return host_seconds() - t0;
}

// As above, with finish() once after the loop, inside the timed span: a host-clock sample of work
// queued on a device ends when the queue has drained (finish synchronizes it).
template <class Fn, class Finish>
double time_host(std::int64_t reps, Fn&& fn, Finish&& finish) {
  const double t0 = host_seconds();
  for (std::int64_t r = 0; r < reps; ++r) fn();
  finish();
  return host_seconds() - t0;
}

}  // namespace gtb
