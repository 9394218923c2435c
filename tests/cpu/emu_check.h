// What the stand-in kernel tests share: random inputs, poisoned outputs, a float64 comparison that
// keeps its mismatch for the failure message, and the check run as written and with the planted
// indexing error (the grid's last block run as block 0), which must fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/common/random.h"
#include "kernels/common/verify.h"

namespace gtb_emu_check {
using vec = std::vector<float>;
using dvec = std::vector<double>;

inline vec rnd(std::size_t n, std::uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  vec v(n);
  gtb::fill_uniform(v.data(), v.size(), seed, lo, hi);
  return v;
}
inline vec poisoned(std::size_t n) {
  vec v(n);
  gtb::poison(v.data(), v.size());
  return v;
}
inline std::string last_mismatch;  // what the last failed comparison found, for the failure message
inline bool close(const vec& got, const dvec& ref, double rtol = 1e-5, double atol = 1e-6) {
  const gtb::ErrorReport e = gtb::compare_elementwise(got.data(), ref.data(), ref.size(), rtol, atol);
  if (!e.ok) last_mismatch = e.detail;
  return e.ok;
}
// Runs `check` (which returns whether the kernel matched its reference) as written, then with the
// planted indexing error, which must make it fail. Needs the stand-in's gtb_emu (cuda_runtime_api.h).
inline void with_plant(const std::function<bool()>& check) {
  last_mismatch = "(a count or flag differs)";
  EXPECT_TRUE(check()) << "the kernel as written: " << last_mismatch;
  gtb_emu::plant_last_block_as_first = true;
  const bool planted = check();
  gtb_emu::plant_last_block_as_first = false;
  EXPECT_FALSE(planted) << "the planted indexing error passed the check";
}
}  // namespace gtb_emu_check
