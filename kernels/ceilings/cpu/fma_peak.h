// The CPU's measured FP32 compute ceiling: independent FMA chains on registers, all threads, at
// each vector ISA the CPU has (AVX-512, AVX2, the SSE2 baseline).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/names.h"

namespace gtb::cpu {

GTB_NAMED_ENUM(FmaIsa, kFmaIsaNames, avx512, avx2, baseline);
inline FmaIsa fma_isa_from_string(const std::string& s) {  // throws std::invalid_argument
  return parse_name(kFmaIsaNames, s, "fma isa");
}
bool fma_isa_supported(FmaIsa isa);                 // this CPU runs it (checked at run time)
int fma_lanes(FmaIsa isa);                          // floats per vector: 16, 8, 4
// Independent chains per thread: enough to cover the FMA latency on every port.
inline constexpr int kFmaChains = 12;

// Every thread runs x <- x * mul + add for `iters` iterations on kFmaChains vectors of its own.
// `state` holds threads x kFmaChains x lanes floats (the starting values, then the results).
// The baseline has no FMA instruction: a multiply then an add, rounded separately, counted as
// two FLOPs like an FMA. Returns the FLOPs done.
double fma_peak_run(FmaIsa isa, float* state, int threads, std::int64_t iters, float mul, float add);

// The same recurrence, one element at a time, rounded exactly as `isa` rounds it (std::fma, or a
// product then a sum): a bit-exact reference.
void fma_peak_reference(FmaIsa isa, float* state, std::size_t count, std::int64_t iters, float mul, float add);

}  // namespace gtb::cpu
