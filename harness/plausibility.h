// Plausibility checks on finished records: numbers that cannot be right are kept but flagged `suspect`.
#pragma once

#include <vector>

#include "harness/types.h"

namespace gtb {

// How far past a limit a record must be before it is flagged (noise stays unflagged).
struct PlausibilityLimits {
  double over_ceiling = 1.0;         // rate / measured ceiling above this, at a size not cache-resident
  double cache_multiple = 4.0;       // not cache-resident: bytes touched > this x the largest cache
  double parallel_vs_serial = 0.9;   // parallel variant's speed / its best serial twin's below this
  double event_vs_host = 1.05;       // GPU event time / host wall time around it above this
  double event_resolution_s = 1e-6;  // CUDA events' resolution, per sample (about 0.5 us, doubled)
};

// Sets Record::suspect (clearing what an earlier pass set) on ok records where:
//  - a GB/s rate exceeds the measured ceiling it names (context.ceilings) while the bytes it touches
//    (info.working_set_bytes, else half its counted bytes per repetition) exceed cache_multiple x the
//    largest cache of its side (context.host.caches for the CPU, the device's l2_bytes for a GPU);
//  - a CPU variant running several threads (info.threads > 1) is slower than the best variant of the
//    same problem running one (info.threads == 1);
//  - a GPU record timed by CUDA events took longer per repetition than the host wall clock around the
//    same samples (info.host_wall_seconds_per_rep): the events cannot have timed this work.
void flag_suspects(std::vector<Record>& records, const json& context, const PlausibilityLimits& lim = {});

}  // namespace gtb
