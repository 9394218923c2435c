// The host build-flag variants: the same loops (flag_kernels.cpp) compiled once per flag set, each
// into its own namespace, and the table that names them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gtb::pitfalls {

// One compiled copy of the loops. All loops run on every OpenMP thread (as a framework's CPU
// kernels do); only the compiler flags differ between copies.
struct HostKernels {
  const char* name;   // O0, O2, O3, O3_isa
  const char* flags;  // the optimisation flags this copy was compiled with
  const char* isa;    // the instruction set the code may use (x86-64 = the generic SSE2 target)
  void (*chain)(const float* x, float* y, std::size_t n);
  void (*act)(const float* z, const float* bias, const float* g, float* a, float* dz, std::size_t rows,
              std::size_t width);
  // Per-row losses into loss[rows]; labels in [0, classes).
  void (*xent)(const float* logits, const int* labels, float* grad, float* loss, std::size_t rows, int classes);
  // partial[n / kReduceBlock] (flag_math.h); n must be a multiple of kReduceBlock.
  void (*reduce)(const float* x, float* partial, std::size_t n);
};

// The project's default build is -O3 for the generic target: the variant every other is compared to.
inline constexpr const char* kHostBaseline = "O3";

// The variants this build holds, in order O0, O2, O3, then O3_isa where this CPU can run one of the
// ISA builds (the widest it supports; never one it lacks). On a CPU without AVX2 (or not x86-64)
// O3_isa is missing and host_isa_unavailable() says why.
const std::vector<HostKernels>& host_variants();
const HostKernels* find_host_variant(const std::string& name);  // nullptr when absent
std::string host_isa_unavailable();                             // empty when O3_isa is present

struct FlagData;
// Runs workload d.work of `k` on d's inputs into out (d.out_size()) and out2 (d.out2_size()).
void run_host_variant(const HostKernels& k, const FlagData& d, float* out, float* out2);

}  // namespace gtb::pitfalls
