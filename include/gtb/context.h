// The machine and build that produced a results file.
#pragma once

#include <string>
#include <vector>

#include "harness/document/types.h"

namespace gtb {

// Host: CPU model, cores, threads used, ISA flags, BLAS and its core type, compiler and flags,
// build type, git commit and dirty flag, OS, hostname.
json host_context();
// The ISA flags (/proc/cpuinfo names) that decide which kernels a BLAS or compiler can use.
std::vector<std::string> cpu_isa_flags();
// Data/unified cache sizes of CPU 0 as the kernel reports them (sysfs); 0 where unknown.
// GTB_CPU_LLC_BYTES=N replaces the last-level size the rules below use (a simulated machine: tests
// cover small and huge caches on any host); the context then names it as injected.
struct CpuCaches {
  long long l1d_bytes = 0;
  long long l2_bytes = 0;
  long long l3_bytes = 0;
  long long injected_llc_bytes = 0;  // from GTB_CPU_LLC_BYTES, 0 when not set
  // The largest cache level found (or the injected size): a working set above a few times this is
  // memory-resident.
  long long last_level_bytes() const;
};
CpuCaches cpu_caches();
// A working set below this many times the last-level cache may be served (partly) by a cache.
constexpr double kCacheResidentMultiple = 4.0;
// Whether a working set of this many bytes may be served (partly) by a cache of `cache_bytes`:
// below kCacheResidentMultiple x the cache. Only larger sets measure memory; false where the cache
// size is unknown (0).
bool cache_resident(double working_set_bytes, long long cache_bytes);
// The same against this machine's CPU last-level cache.
bool cache_resident(double working_set_bytes);
// Bytes the kernel says a new allocation can get without swapping (/proc/meminfo MemAvailable); 0
// when unknown. GTB_HOST_AVAILABLE_BYTES=N replaces it (a simulated machine, for tests).
long long host_available_bytes();
// ---- OpenBLAS's core type (which kernel set it runs), as the context reports it ----
// The selection itself (include/gtb/blas_core.h) runs only in the families that use OpenBLAS;
// these environment variables carry its decision across a re-execution. The user's
// OPENBLAS_CORETYPE is always respected; GTB_OPENBLAS_AUTOCORE=0 keeps OpenBLAS's own choice.
inline constexpr const char* kEnvCoretype = "OPENBLAS_CORETYPE";
inline constexpr const char* kEnvAutocore = "GTB_OPENBLAS_AUTOCORE";
inline constexpr const char* kEnvDetected = "GTB_OPENBLAS_DETECTED";
inline constexpr const char* kEnvReason = "GTB_OPENBLAS_REASON";
// For the context: {corename, source: detected|gtb|user, detected, requested, reason}.
json openblas_core_context();
// "detected", "gtb" or "user": who chose the core this process runs.
std::string openblas_core_source();
// Why this process kept OpenBLAS's own choice (the selection sets it; the context reports it).
// Without a selection: "not examined: this family does not use OpenBLAS", and the context's
// coretype says "examined": false.
void set_openblas_core_note(const std::string& note);
// How the loaded OpenBLAS runs its threads: "openmp" (on the OpenMP team gtb's loops use),
// "pthreads" (a pool of its own beside OpenMP's), "sequential", or "unknown (N)".
std::string openblas_threading();

// Environment variables that change what a library computes: {variable: value as found} for each
// set in this process's environment (an empty object when none is). Today NVIDIA_TF32_OVERRIDE
// (harness/document/plausibility.h: cuBLAS reads it; it is named beside the records it concerns).
json environment_context();

// GPU: {"available": true, devices: [...], driver/runtime/cuBLAS versions} or
// {"available": false, "reason": "<CUDA error text>"}.
json gpu_context();
// Compiler, flags, build type, CUDA toolkit and architectures, git commit and dirty flag.
json build_context();
// Host, build, GPU and environment, plus the clocks and units.
json full_context();

}  // namespace gtb
