// Plausibility checks on finished records: numbers that cannot be right are kept but flagged `suspect`.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/document/types.h"

namespace gtb {

// How far past a limit a record must be before it is flagged (noise stays unflagged).
struct PlausibilityLimits {
  double over_ceiling = 1.0;         // rate / measured ceiling above this, at a size not cache-resident
  double cache_multiple = 4.0;       // not cache-resident: bytes touched > this x the largest cache
  double parallel_vs_serial = 0.9;   // multi-threaded variant's speed / its best serial twin's below this
  double event_vs_host = 1.05;       // GPU event time / host wall time around it above this
  double event_resolution_s = 1e-6;  // CUDA events' resolution, per sample (about 0.5 us, doubled)
  // Drift: with at least drift_min_samples samples in one run, a rank correlation with the sample
  // order of at least this, the last third's median this many times the first third's (or its
  // inverse), and an interquartile range of at least drift_min_spread of the median (a drift the
  // median does not feel is left alone).
  std::size_t drift_min_samples = 6;
  double drift_rank_correlation = 0.8;
  double drift_ratio = 1.5;
  double drift_min_spread = 0.1;
  double max_spread = 0.5;  // interquartile range / median above this: too spread to be one figure
};

// NVIDIA_TF32_OVERRIDE is read by cuBLAS and cuDNN themselves, never by gtb: NVIDIA documents that
// 0 keeps its libraries from TF32 whatever the program asks. The context reports it as found
// (context.environment, include/gtb/context.h).
inline constexpr const char* kEnvNvidiaTf32Override = "NVIDIA_TF32_OVERRIDE";
// Whether NVIDIA_TF32_OVERRIDE concerns a record: a GPU record of precision tf32 (a tensor-core GEMM
// mode, whatever the family), or a GPU cuBLAS GEMM of precision fp32 (FP32 operands, info.compute_type
// CUBLAS_COMPUTE_32F: cuBLAS's FP32 GEMM records).
bool tf32_override_concerns(const Record& r);
// Names the variable beside every record it concerns that ran (status ok or invalid), when the
// context says it was set: info.nvidia_tf32_override = its value as found.
void note_tf32_override(std::vector<Record>& records, const json& context);

// Sets Record::suspect (clearing what an earlier pass set) on ok records where:
//  - a GB/s rate exceeds the measured ceiling it names (context.ceilings, published.h) while the bytes it touches
//    (info.working_set_bytes, else half its counted bytes per repetition) exceed cache_multiple x the
//    largest cache of its side (context.host.caches for the CPU, the device's l2_bytes for a GPU);
//  - a CPU variant running several threads (info.threads > 1) is slower than the best variant of the
//    same problem running one (info.threads == 1);
//  - a GPU record timed by CUDA events took longer per repetition than the host wall clock around the
//    same samples (info.host_wall_seconds_per_rep): the events cannot have timed this work;
//  - its samples drifted through the record or spread too widely (limits above);
//  - it is a GPU record of precision tf32 and the context says NVIDIA_TF32_OVERRIDE=0: its GEMMs ran
//    FP32, so the figure is not TF32's.
// A record's own info.cache_resident mark decides whether it may beat a memory ceiling: true never
// flags, false flags whatever the context's cache sizes say.
void flag_suspects(std::vector<Record>& records, const json& context, const PlausibilityLimits& lim = {});

}  // namespace gtb
