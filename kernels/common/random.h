// Deterministic random inputs (never zeros): the same seed gives the same data on every backend.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/hd.h"

namespace gtb {

// splitmix64: a counter-based generator, so element i can be produced independently (in parallel).
GTB_HD std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// Uniform in (0, 1), never exactly 0 or 1.
GTB_HD double uniform01(std::uint64_t seed, std::uint64_t i) {
  return (static_cast<double>(mix64(seed * 0x2545F4914F6CDD1DULL + i) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

// Host fills (OpenMP-parallel). uniform: in [lo, hi); normal: mean 0, stddev `sigma`.
void fill_uniform(float* x, std::size_t n, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);
void fill_uniform(double* x, std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
void fill_normal(float* x, std::size_t n, std::uint64_t seed, float sigma = 1.0f);
void fill_normal(double* x, std::size_t n, std::uint64_t seed, double sigma = 1.0);
// Random bytes (for copies): every byte pattern, no zero runs.
void fill_bytes(void* p, std::size_t bytes, std::uint64_t seed);

}  // namespace gtb
