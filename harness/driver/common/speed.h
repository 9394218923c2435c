// How fast the machine runs at one moment: a few milliseconds of fixed work, read before and after
// each family. On a shared or virtual machine the host's other work changes the speed of a core, how
// well the cores scale together and how long a sleeping thread takes to wake, from one minute to the
// next, and neither the load average nor the steal time sees it: records measured minutes apart (a
// step and the records its prediction comes from) then differ by that much before any model is wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/document/types.h"

namespace gtb::health {

struct Speed {
  int threads = 0;           // the threads the all-core reading ran (the online CPUs)
  double one_core = 0;       // G multiply-adds/s of a fixed loop on one thread (median of its repeats)
  double all_cores = 0;      // the same loop on every thread at once, summed (median of its repeats)
  double wake_us = 0;        // median microseconds from notifying a thread asleep on a condition variable
  double wake_max_us = 0;    // until it runs; and the slowest of the rounds
  // Whether each CPU has a core's cache of its own: every thread sums a buffer of its own that fits
  // one core's L2 (kCacheSweepShare of it), all at once, against one thread alone. `cache_scaling`:
  // the threads' summed rate over `threads` x the one thread's (medians of their repeats); about 1
  // where each CPU has its own L2, about 1 / threads where they share one core's (SMT siblings of one
  // core, as a host may place a virtual machine's CPUs). 0 where the L2's size is unknown.
  double cache_sweep_bytes = 0;  // per thread
  double cache_scaling = 0;
};

// The share of one core's L2 each thread's buffer of the cache reading takes: one fits, two do not.
inline constexpr double kCacheSweepShare = 0.6;

// Reads it (well under a second); `threads` < 1 means the online CPUs; `l2_bytes` < 0 means this
// machine's L2 per core (0: the cache reading is left out).
Speed measure_speed(int threads = 0, long long l2_bytes = -1);
json to_json(const Speed& s);

// The spread over a run: every family's before and after readings (families[].health.speed), or
// nothing when the file has none. `low_over_high`: the slowest all-core reading over the fastest.
struct SpeedSpread {
  int readings = 0;
  double one_core_min = 0, one_core_max = 0;
  double all_cores_min = 0, all_cores_max = 0;
  double wake_us_median = 0, wake_max_us = 0;  // the middle reading (the lower middle one of an even count)
  // The cache reading over the readings that hold it (cache_readings of them); `cache_shared`: how
  // many read a scaling under kCacheSharedLimit.
  int cache_readings = 0, cache_shared = 0;
  double cache_scaling_min = 0, cache_scaling_max = 0, cache_sweep_bytes = 0;
  int threads = 0;
  double low_over_high() const { return all_cores_max > 0 ? all_cores_min / all_cores_max : 1.0; }
};
std::optional<SpeedSpread> speed_spread(const json& doc);

// A speed that changed by more than this during a run (the slowest all-core reading under
// 1 - kSpeedSpreadLimit of the fastest) is called out in the report, beside the model's validation.
inline constexpr double kSpeedSpreadLimit = 0.15;
// A cache reading under this scaling: the CPUs shared one core's cache at that moment (the report
// says so, and how often).
inline constexpr double kCacheSharedLimit = 0.75;

// Whether the machine's speed changed while one family ran, from its before and after readings
// (families[].health.speed): a loop rate (one core or all cores) that moved by more than
// kSpeedSpreadLimit, or a cache reading that crossed kCacheSharedLimit by more than kSpeedSpreadLimit
// (the CPUs on cores of their own at one reading, sharing one core's cache at the other). The
// warning that says what moved, or "" when nothing did (or a reading is missing). A machine that is
// steadily slow (CPUs that always share a core) is not flagged: only a change is.
std::string speed_change(const json& family_speed);

// One sentence on the spread for the report ("The machine's speed ... "), empty when there is none.
std::string speed_sentence(const SpeedSpread& s);

}  // namespace gtb::health
