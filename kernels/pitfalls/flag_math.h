// The per-element math the build-flag variants compile: one definition for the host and the device,
// built from the vectorize chain and the MLP step's elementwise math so that the A/B measures the
// code the other families run.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/common/hd.h"
#include "kernels/common/names.h"
#include "kernels/train/mlp.h"
#include "kernels/vectorize/elementwise.h"

namespace gtb::pitfalls {

// The workloads of the build-flag A/B. chain: y = gelu(scale*x + bias) (the vectorize chain).
// act: the MLP's bias + GELU forward and its backward in one pass (a = gelu(z+b), dz = g*gelu'(z+b)).
// xent: softmax cross-entropy of each row (exp and log per logit). reduce: the sum of x*x over each
// block of kReduceBlock elements (a bias-gradient or loss sum), accumulated in float.
GTB_NAMED_ENUM(FlagWork, kFlagWorkNames, chain, act, xent, reduce);
inline constexpr FlagWork kFlagWorks[] = {FlagWork::chain, FlagWork::act, FlagWork::xent, FlagWork::reduce};
inline constexpr int kXentClasses = 16;  // the train family's class count
inline constexpr ChainParams kFlagChain{1.5f, 0.25f};
inline constexpr std::size_t kReduceBlock = 1024;
inline constexpr std::size_t kActWidth = 256;  // the act workload's rows are n / kActWidth

inline FlagWork flag_work_from_string(const std::string& s) {  // throws std::invalid_argument
  return parse_name(kFlagWorkNames, s, "build-flag workload");
}

GTB_HD void act_fwd_bwd(float z, float b, float g, float& a, float& dz) {
  const float v = z + b;
  a = mlp::act_forward(mlp::Act::gelu, v);
  dz = g * mlp::act_derivative(mlp::Act::gelu, v);
}

// One row of `classes` logits: writes dLoss/dlogit (of this row's loss, unscaled) into grad and
// returns the row's loss.
GTB_HD float xent_row(const float* logits, int label, float* grad, int classes) {
  return mlp::softmax_xent_row<float>(
      classes, label, 1.0f, [&](int j) { return logits[j]; }, [&](int j, float g) { grad[j] = g; });
}

}  // namespace gtb::pitfalls
