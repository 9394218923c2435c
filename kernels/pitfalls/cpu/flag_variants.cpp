// The table of host build-flag variants and the run-time choice of the ISA build this CPU can run.
#include <string>
#include <vector>

#include "kernels/pitfalls/cpu/flag_kernels.h"
#include "kernels/pitfalls/reference.h"

namespace gtb::pitfalls {

// Defined by the variant objects (kernels/pitfalls/cpu/flag_kernels.cpp, one per flag set).
const HostKernels& host_kernels_O0();
const HostKernels& host_kernels_O2();
const HostKernels& host_kernels_O3();
#if defined(GTB_PF_HAVE_ISA)
const HostKernels& host_kernels_O3_v3();
const HostKernels& host_kernels_O3_v4();
#endif

namespace {

// The widest ISA build this CPU runs: x86-64-v4 needs AVX-512 F/BW/DQ/VL (and v3 below it),
// x86-64-v3 needs AVX2, FMA, BMI2 (and more that every AVX2 CPU has).
const HostKernels* isa_build(std::string& why) {
#if defined(GTB_PF_HAVE_ISA)
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (v4) return &host_kernels_O3_v4();
  if (v3) return &host_kernels_O3_v3();
  why = "this CPU lacks AVX2/FMA, so neither ISA build (x86-64-v3, x86-64-v4) may run";
  return nullptr;
#else
  why = "no ISA build for this architecture (x86-64 only)";
  return nullptr;
#endif
}

struct Table {
  std::vector<HostKernels> variants;
  std::string isa_why;
  Table() {
    variants = {host_kernels_O0(), host_kernels_O2(), host_kernels_O3()};
    if (const HostKernels* k = isa_build(isa_why)) {
      HostKernels named = *k;
      named.name = "O3_isa";  // one variant name whatever the ISA; the record says which
      variants.push_back(named);
    }
  }
};
const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const std::vector<HostKernels>& host_variants() { return table().variants; }

const HostKernels* find_host_variant(const std::string& name) {
  for (const auto& k : table().variants)
    if (name == k.name) return &k;
  return nullptr;
}

std::string host_isa_unavailable() { return table().isa_why; }

void run_host_variant(const HostKernels& k, const FlagData& d, float* out, float* out2) {
  switch (d.work) {
    case FlagWork::chain: return k.chain(d.x.data(), out, d.n);
    case FlagWork::act: return k.act(d.x.data(), d.bias.data(), d.g.data(), out, out2, d.rows, kActWidth);
    case FlagWork::xent: return k.xent(d.x.data(), d.labels.data(), out, out2, d.rows, kXentClasses);
    case FlagWork::reduce: return k.reduce(d.x.data(), out, d.n);
  }
}

}  // namespace gtb::pitfalls
