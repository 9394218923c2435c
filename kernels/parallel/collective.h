// Collectives as nccl-tests counts them: sizes, algbw/busbw, and the input pattern shared by CPU and GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/clock.h"  // gtb::host_seconds, the clock of the timed loops here
#include "kernels/common/hd.h"
#include "kernels/common/names.h"
#include "kernels/common/random.h"

namespace gtb::parallel {

// Thrown where this build or this launch cannot do what was asked (no MPI or NCCL, one rank only); the
// bench turns it into a skipped record with this text.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Collective : int { all_reduce = 0, reduce_scatter = 1, all_gather = 2 };

inline constexpr NameTable<Collective, 3> kCollectiveNames = {{{Collective::all_reduce, "all_reduce"},
                                                                {Collective::reduce_scatter, "reduce_scatter"},
                                                                {Collective::all_gather, "all_gather"}}};
inline const char* to_string(Collective c) { return name_of(kCollectiveNames, c); }
inline Collective collective_from_string(const std::string& s) { return parse_name(kCollectiveNames, s, "collective"); }

// nccl-tests' size convention: `bytes` is the all-reduce buffer, and for all-gather and
// reduce-scatter the large buffer (the gathered output, the scattered input), so every rank holds
// bytes / n of it on its small side. Element counts per rank for a size in bytes:
struct Counts {
  std::size_t send = 0, recv = 0;  // elements in this rank's send and receive buffers
};
inline Counts counts_of(Collective c, std::size_t bytes, std::size_t elem_bytes, int ranks) {
  const std::size_t total = bytes / elem_bytes;
  const std::size_t part = total / std::size_t(ranks);
  switch (c) {
    case Collective::all_reduce: return {total, total};
    case Collective::reduce_scatter: return {part * std::size_t(ranks), part};
    case Collective::all_gather: return {part, part * std::size_t(ranks)};
  }
  return {};
}
// The size a case really moves once rounded down to whole elements per rank.
inline std::size_t effective_bytes(Collective c, std::size_t bytes, std::size_t elem_bytes, int ranks) {
  const Counts k = counts_of(c, bytes, elem_bytes, ranks);
  return (c == Collective::all_gather ? k.recv : k.send) * elem_bytes;
}

// algbw = size / time; busbw = algbw * factor, the factor that makes busbw comparable with the link's
// peak whatever the rank count: 2(n-1)/n for all-reduce, (n-1)/n for the other two. One rank: 0.
inline double bus_factor(Collective c, int ranks) {
  if (ranks < 1) throw std::invalid_argument("bus_factor: ranks must be >= 1");
  const double n = ranks;
  return c == Collective::all_reduce ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
}
inline double algbw_gbps(double bytes, double seconds) { return bytes / seconds / 1e9; }
inline double busbw_gbps(Collective c, int ranks, double bytes, double seconds) {
  return algbw_gbps(bytes, seconds) * bus_factor(c, ranks);
}

// The input of rank r at element i: a random multiple of 1/64 in [-1, 1), never 0. Sums of up to
// 2^16 such values are exact in float32, and each value is exact in bfloat16, so a checked sum
// compares exactly in float32 and within bf16 rounding of the additions in bf16.
GTB_HD float pattern_value(std::uint64_t seed, int rank, std::size_t i) {
  const std::uint64_t h = mix64(seed ^ (std::uint64_t(rank) * 0x9e3779b97f4a7c15ULL) ^ (std::uint64_t(i) << 20));
  const int k = int(h % 127u) - 63;  // -63..63
  return float(k == 0 ? 64 : k) / 64.0f;
}
// The reduced value at element i over `ranks` ranks, in float64.
inline double pattern_sum(std::uint64_t seed, int ranks, std::size_t i) {
  double s = 0;
  for (int r = 0; r < ranks; ++r) s += double(pattern_value(seed, r, i));
  return s;
}

}  // namespace gtb::parallel
