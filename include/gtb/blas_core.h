// Which OpenBLAS kernel set (core type) a family process runs with, and why: the selection, in its
// own library (gtb_runtime_openblas) that only the families using OpenBLAS link and install.
//
// OpenBLAS built with DYNAMIC_ARCH picks its kernels once, when the library loads. On a CPU model
// it does not know (often a virtual machine's) it falls back to generic SSE kernels that run at a
// fraction of what the CPU does. OPENBLAS_CORETYPE overrides the choice, but only for a process
// that has not loaded OpenBLAS yet, so a family binary that wants another core re-executes itself.
#pragma once

#include <string>
#include <vector>

#include "gtb/context.h"

namespace gtb {

// The vector ISA an OpenBLAS x86 core name's kernels use: 0 SSE (the generic fallback), 1 AVX,
// 2 AVX2, 3 AVX-512; -1 for a name gtb does not know (never overridden). Case-insensitive.
int openblas_core_rank(const std::string& corename);
// The core type whose kernels match the widest vector ISA in `isa_flags` (/proc/cpuinfo names):
// "Cooperlake", "SkylakeX", "Haswell", "Sandybridge", or "" when the CPU has no AVX.
std::string matching_openblas_core(const std::vector<std::string>& isa_flags);

// What to try instead of OpenBLAS's own choice `detected`: `core` is empty when its choice stands.
struct CoreChoice {
  std::string core;
  std::string reason;
};
CoreChoice choose_openblas_core(const std::vector<std::string>& isa_flags, const std::string& detected);

// Decides the core type for this process before any measurement: when OpenBLAS fell back to a
// narrower kernel set than the CPU supports and neither OPENBLAS_CORETYPE nor
// GTB_OPENBLAS_AUTOCORE=0 is set, it runs a probe child with the matching core; if that child's
// SGEMM verifies against float64 and is faster than this process's, the binary re-executes itself
// with OPENBLAS_CORETYPE set (this call does not return then). Otherwise it returns and notes why.
void select_openblas_core(char** argv);

// Handles `--gtb_blas_probe` (first argument): verifies and times SGEMM with the loaded core, prints
// "<corename> <verified 0|1> <gflops>" and returns the exit code; -1 when argv is not a probe call.
int blas_probe_main(int argc, char** argv);

// Installs the selection as a start-up hook of this family binary (probe mode first, the decision
// before any case); a family that uses OpenBLAS calls it once from a static initializer:
//   const bool kOpenblasCore = gtb::install_openblas_core_selection();
// The context reports the outcome (openblas_core_context in include/gtb/context.h).
bool install_openblas_core_selection();

}  // namespace gtb
