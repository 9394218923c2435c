// The machine and build that produced a results file.
#pragma once

#include "harness/types.h"

namespace gtb {

// Host: CPU model, cores, threads used, ISA flags, BLAS and its core type, compiler and flags,
// build type, git commit and dirty flag, OS, hostname.
json host_context();
// GPU: {"available": true, devices: [...], driver/runtime/cuBLAS versions} or
// {"available": false, "reason": "<CUDA error text>"}.
json gpu_context();
// Compiler, flags, build type, CUDA toolkit and architectures, git commit and dirty flag.
json build_context();
// Both, plus the time of the run and the harness/schema versions.
json full_context();

}  // namespace gtb
