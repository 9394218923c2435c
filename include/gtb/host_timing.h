// The host-clock timing loop behind State::exec(), and the one host-clock helper a case may call:
// batch_seconds(), inside the body of State::exec_batch_self_timed() only.
#pragma once

#include <cstdint>

#include "kernels/common/clock.h"

namespace gtb {

// Host wall seconds (host_seconds) for `reps` calls of fn(). A template, so that the loop around a
// short operation costs no indirect call. State::exec() times each sample with it; a case calls it
// only in a self-timed batch (MPI ranks in lockstep, a kernel that runs its own repetitions).
template <class Fn>
double batch_seconds(std::int64_t reps, Fn&& fn) {
  const double t0 = host_seconds();
  for (std::int64_t r = 0; r < reps; ++r) fn();
  return host_seconds() - t0;
}

// As above, with finish() once after the loop, inside the timed span: a host-clock sample of work
// queued on a device ends when the queue has drained (finish synchronizes it). finish() also runs
// once before the span, untimed, so that the sample starts from a drained queue.
template <class Fn, class Finish>
double batch_seconds(std::int64_t reps, Fn&& fn, Finish&& finish) {
  finish();
  const double t0 = host_seconds();
  for (std::int64_t r = 0; r < reps; ++r) fn();
  finish();
  return host_seconds() - t0;
}

// How State::probe() takes its short pre-measurement: `samples` samples of `reps` calls each (0:
// as many calls as make one sample last min_sample_seconds, after one untimed call and one timed).
struct ProbeRule {
  int samples = 3;
  double min_sample_seconds = 0.02;
  std::int64_t reps = 0;
};

}  // namespace gtb
