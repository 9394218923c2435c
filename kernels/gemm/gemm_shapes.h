// The GEMM shapes the suite measures (square sweep, transformer training, small-batch skinny,
// aligned vs misaligned) per suite and backend, and the class each shape belongs to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/gemm/gemm.h"

namespace gtb::gemm {

// Row-major C[m x n] = A[m x k] * B[k x n].
struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  std::string shape_class;  // square, training, skinny, alignment
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
};

// The CPU gets the shapes whose FLOPs stay under this bound in the full suite: an 8192^3 GEMM
// (1.1 TFLOP) already takes seconds per call on a many-core CPU, 16384^3 minutes on a small one.
inline constexpr double kCpuFullMaxFlops = 1.2e12;

namespace detail {
inline void add(std::vector<Shape>& v, std::int64_t m, std::int64_t n, std::int64_t k, const char* cls) {
  for (const Shape& s : v)
    if (s.m == m && s.n == n && s.k == k) return;  // the first class given wins
  v.push_back(Shape{m, n, k, cls});
}
// A transformer MLP on `tokens` rows: up-projection (hidden -> 4 hidden), down-projection
// (4 hidden -> hidden) and, in the full suite, the weight gradient of the up-projection (k = tokens).
inline void add_training(std::vector<Shape>& v, std::int64_t tokens, std::int64_t hidden, bool weight_grad) {
  add(v, tokens, 4 * hidden, hidden, "training");
  add(v, tokens, hidden, 4 * hidden, "training");
  if (weight_grad) add(v, hidden, 4 * hidden, tokens, "training");
}
}  // namespace detail

inline std::vector<Shape> shapes(bool full, bool cpu) {
  std::vector<Shape> v;
  if (!full) {
    // Quick: the CPU part must stay within a few seconds on a small machine, so its largest
    // shapes are 2048-sized; the GPU adds the sizes where tensor cores reach their rate.
    for (std::int64_t s : {256, 1024, 2048}) detail::add(v, s, s, s, "square");
    if (!cpu)
      for (std::int64_t s : {4096, 8192}) detail::add(v, s, s, s, "square");
    detail::add_training(v, 2048, 1024, false);
    if (!cpu) detail::add_training(v, 4096, 4096, false);
    for (std::int64_t b : {1, 32, 128}) detail::add(v, b, 4096, 4096, "skinny");
    // Misaligned neighbours of 2048 and, on the GPU, of 4096 (one element short of a tile and
    // vector-width multiple); the 4-aligned 2052/4100 and the 8k neighbours are full-suite shapes.
    detail::add(v, 2047, 2047, 2047, "alignment");
    if (!cpu) detail::add(v, 4095, 4095, 4095, "alignment");
    return v;
  }
  for (std::int64_t s = 128; s <= 16384; s *= 2) detail::add(v, s, s, s, "square");
  for (std::int64_t s : {3072, 6144, 12288}) detail::add(v, s, s, s, "square");
  for (std::int64_t hidden : {1024, 2048, 4096, 8192})
    for (std::int64_t tokens : {2048, 4096, 8192, 16384}) detail::add_training(v, tokens, hidden, true);
  for (std::int64_t hidden : {4096, 8192})
    for (std::int64_t b : {1, 2, 4, 8, 16, 32, 64, 128}) detail::add(v, b, hidden, hidden, "skinny");
  for (std::int64_t s : {2047, 2052, 4095, 4100, 8191, 8200}) detail::add(v, s, s, s, "alignment");
  // A SwiGLU width that is not a multiple of 64 next to its padded neighbour.
  detail::add(v, 4096, 10922, 4096, "alignment");
  detail::add(v, 4096, 10944, 4096, "alignment");
  if (cpu)
    v.erase(std::remove_if(v.begin(), v.end(), [](const Shape& s) { return flops(s.m, s.n, s.k) > kCpuFullMaxFlops; }),
            v.end());
  return v;
}

// The shapes the quick suite also measures with a cold L2 (the full suite: every shape). A square
// whose operands fit in L2 many times over and a skinny GEMM whose weight matrix fits in a 50-60 MB L2
// in 16-bit, the two places where a warm L2 flatters the rate most; every other quick record is
// warm only, which bounds the quick GPU part (every record may take its whole sampling budget).
inline bool quick_cold_l2(std::int64_t m, std::int64_t n, std::int64_t k) {
  return (m == 1024 && n == 1024 && k == 1024) || (m == 32 && n == 4096 && k == 4096);
}

// The class of a shape in any suite ("" when the suite does not measure it).
inline std::string shape_class(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (bool full : {false, true})
    for (const Shape& s : shapes(full, false))
      if (s.m == m && s.n == n && s.k == k) return s.shape_class;
  return "";
}

inline bool contains(const std::vector<Shape>& v, std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::any_of(v.begin(), v.end(), [&](const Shape& s) { return s.m == m && s.n == n && s.k == k; });
}

}  // namespace gtb::gemm
