// Inputs and float64 references of the build-flag workloads, and the check every variant's output
// must pass before it is timed (host and device variants alike).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/verify.h"
#include "kernels/pitfalls/flag_math.h"

namespace gtb::pitfalls {

// One workload at n elements: random inputs (never zeros) and their float64 results.
// chain: x -> y. act: z (rows x kActWidth), bias, g -> a, dz. xent: logits (rows x 16), labels ->
// grad, loss[rows]. reduce: x -> partial[n / kReduceBlock].
struct FlagData {
  FlagWork work = FlagWork::chain;
  std::size_t n = 0;
  std::size_t rows = 0;  // act and xent
  std::vector<float> x, bias, g;  // x is z (act) or the logits (xent)
  std::vector<int> labels;
  std::vector<double> ref, ref2;  // y / a / grad / partial; dz / loss
  std::size_t out_size() const { return ref.size(); }
  std::size_t out2_size() const { return ref2.size(); }
};

// n must be > 0 and a multiple of kReduceBlock (which also makes it a multiple of kActWidth and of
// the class count); throws std::invalid_argument otherwise.
FlagData make_flag_data(FlagWork w, std::size_t n, std::uint64_t seed = 20261130);

// Tolerances against float64: the float math rounds a few times and the GELU and exp are
// approximations within a few ulp; the block sums accumulate 1024 terms in float.
struct FlagCheck {
  bool ok = false;
  // Over both outputs: the largest |got - ref| and the relative norm ||got - ref|| / ||ref||.
  double max_abs_err = 0, rel_norm_err = 0;
  std::string detail;
};
FlagCheck check_flag_output(const FlagData& d, const float* out, const float* out2);

}  // namespace gtb::pitfalls
