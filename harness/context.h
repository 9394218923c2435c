// The machine and build that produced a results file.
#pragma once

#include <string>
#include <vector>

#include "harness/types.h"

namespace gtb {

// Host: CPU model, cores, threads used, ISA flags, BLAS and its core type, compiler and flags,
// build type, git commit and dirty flag, OS, hostname.
json host_context();
// The ISA flags (/proc/cpuinfo names) that decide which kernels a BLAS or compiler can use.
std::vector<std::string> cpu_isa_flags();
// Data/unified cache sizes of CPU 0 as the kernel reports them (sysfs); 0 where unknown.
struct CpuCaches {
  long long l1d_bytes = 0;
  long long l2_bytes = 0;
  long long l3_bytes = 0;
  // The largest cache level found: a working set above a few times this is memory-resident.
  long long last_level_bytes() const;
};
CpuCaches cpu_caches();
// Whether a working set of this many bytes may be served (partly) by the caches: below 4x the
// last-level cache. Only larger sets measure memory; false where the cache sizes are unknown.
bool cache_resident(double working_set_bytes);
// GPU: {"available": true, devices: [...], driver/runtime/cuBLAS versions} or
// {"available": false, "reason": "<CUDA error text>"}.
json gpu_context();
// Compiler, flags, build type, CUDA toolkit and architectures, git commit and dirty flag.
json build_context();
// Both, plus the time of the run and the harness/schema versions.
json full_context();

}  // namespace gtb
