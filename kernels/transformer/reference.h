// What every backend of the transformer step shares on the host: initial parameters, the data, the
// float64 reference step, and the check of a backend's step against it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/transformer/block.h"

namespace gtb::xfmr {

// Deterministic initialization shared by every backend: weights and biases uniform in
// +-1/sqrt(fan_in) (PyTorch nn.Linear's default); layer-norm gamma 1 + U(-0.1, 0.1) and beta
// U(-0.1, 0.1) (random rather than PyTorch's 1 and 0, so that a check sees them act); padding zero.
std::vector<float> init_params(const Config& c, const Layout& lay);

// Random inputs and targets: tokens x d_model each, N(0, 1).
struct Data {
  std::vector<float> x, target;
};
Data make_data(const Config& c, std::uint64_t seed);

// ---- float64 reference: the whole step, its matrix products through DGEMM ----
// A model of a backend's GEMM operands, for the tests that derive a precision's tolerance: `round`
// is applied to every operand element of the projection and MLP products, and of the attention
// products when `attention` is set (a backend whose attention does not run on the GEMMs leaves it
// off). Empty: the exact float64 step.
struct GemmOperands {
  std::function<double(double)> round;
  bool attention = true;
};
struct RefStep {
  double loss = 0;
  std::vector<double> grads;         // layout().total, padding zero
  std::vector<double> params_after;  // after one AdamW step
  std::vector<double> m_after, v_after;
};
// One step from params and AdamW moments m, v (t = steps already taken; empty m, v = zeros).
RefStep reference_step(const Config& c, const std::vector<double>& params, const std::vector<double>& m,
                       const std::vector<double>& v, int t, const float* x, const float* target,
                       const GemmOperands& operands = {});
// The loss only (finite differences in the tests).
double reference_loss(const Config& c, const std::vector<double>& params, const float* x, const float* target);

// ---- the check of one step ----
// Tolerances, derived in docs/transformer.md: every parameter tensor's gradient within `grad_rtol`
// of the reference in relative Frobenius norm, the loss within `loss_rtol`, and the update
// recomputed in float64 from the backend's own gradients elementwise within `update_rtol` of the
// step's movement plus a few float ulps of the weight.
struct Tolerance {
  double loss_rtol = 1e-5, grad_rtol = 1e-4, update_rtol = 1e-4;
};
Tolerance fp32_tolerance();
Tolerance bf16_tolerance(const Config& c);

// What a backend hands the check after the step (all on the host, float).
struct StepOutputs {
  double loss = 0;
  const float* grads = nullptr;         // layout().total
  const float* params_after = nullptr;  // layout().total
  const float* m_after = nullptr;       // AdamW moments after the step
  const float* v_after = nullptr;
};
struct CheckResult {
  bool ok = false;
  std::string detail;
  double worst_grad_rel = 0;   // largest relative norm error of a gradient tensor
  double loss_rel = 0;
};
// params_before, m_before, v_before: the backend's state before the step (float); t: steps taken.
CheckResult check_step(const Config& c, const RefStep& ref, const std::vector<float>& params_before,
                       const std::vector<float>& m_before, const std::vector<float>& v_before, int t,
                       const StepOutputs& got, const Tolerance& tol);

}  // namespace gtb::xfmr
