// The stopping rule: warm-up, minimum samples, a noise target and a time budget per record.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/stats.h"
#include "kernels/common/clock.h"  // gtb::host_seconds

namespace gtb {

struct StopRule {
  int warmup_samples = 1;          // untimed-for-the-record samples run first
  double warmup_seconds = 0.02;    // ...and at least this long
  int min_samples = 10;
  int max_samples = 1000;
  double noise_target = 0.01;      // stop when the median's relative CI half-width is below this
  double budget_seconds = 1.0;     // stop sampling after this (once min_samples, or hard_min, are in)
  int hard_min_samples = 3;        // a slow case still gets this many samples, whatever the budget
  double min_sample_seconds = 50e-6;  // fast operations are repeated until one sample lasts this long
  std::int64_t max_reps = 1 << 20;

  static StopRule quick();
  static StopRule full();
};

// Runs `reps` repetitions of the measured operation and returns their total seconds.
using Sampler = std::function<double(std::int64_t reps)>;

struct SampleSet {
  std::vector<double> seconds_per_rep;  // one entry per kept sample
  std::int64_t reps_per_sample = 1;
  std::int64_t warmup_samples = 0;
  std::string stop_reason;  // "noise_target", "time_budget", "max_samples"
  double total_seconds = 0;
  Stats stats;
};

// Pure decision used by measure(): should sampling stop, and why? Exposed for tests.
// Returns an empty string to continue.
std::string stop_decision(const StopRule& rule, const std::vector<double>& samples, double elapsed_seconds);

// Calibrates repetitions, warms up, samples until the rule says stop. `now` is injectable for tests
// (defaults to a monotonic host clock used only for the budget, never for the samples themselves).
SampleSet run_samples(const StopRule& rule, const Sampler& sampler,
                      const std::function<double()>& now = nullptr);

}  // namespace gtb
