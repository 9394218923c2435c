// What every backend of the train family shares on the host: the initial parameters, the data set,
// the float64 reference step and the verifier of a step from the backend's own tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/train/mlp.h"

namespace gtb::mlp {

// Deterministic initialization shared by every backend: W and b uniform in +-1/sqrt(fan_in)
// (PyTorch nn.Linear's default), padding zero.
std::vector<float> init_params(const Config& c, const Layout& lay);

// A learnable synthetic classification set: one Gaussian cluster per class in input space
// (centres N(0,1), points centre + noise*N(0,1)), labels cycling through the classes.
struct Dataset {
  int rows = 0, input = 0, classes = 0;
  std::vector<float> x;  // rows x input
  std::vector<int> y;
};
Dataset make_clusters(int rows, int input, int classes, std::uint64_t seed, float noise = 0.5f);

// ---- float64 reference (small sizes): the whole step from scratch ----
struct RefStep {
  double loss = 0;
  std::vector<double> grads;         // layout().total, unscaled mean gradient
  std::vector<double> params_after;  // after one optimizer step
  std::vector<double> opt_after;     // state after the step (1 or 2 x total)
};
// One step from params/opt state (t = steps already taken) on `batch` rows.
RefStep reference_step(const Config& c, const std::vector<double>& params, const std::vector<double>& opt, int t,
                       const float* x, const int* labels, int batch);
// Mean loss only (for finite differences).
double reference_loss(const Config& c, const std::vector<double>& params, const float* x, const int* labels,
                      int batch);

// ---- verification of a step at any size, in float64, from what the backend produced ----
// Layer-local checks: sampled rows of every Z, A and dZ against float64 recomputation from that
// layer's own inputs; every weight gradient and Z through random probe vectors (Freivalds), bias
// gradients exactly; every parameter's update elementwise. Cost O(rows*params + B*widths), not a GEMM.
enum class Tensor { z, a, dz };
struct StepView {
  const Config* cfg = nullptr;
  int rows = 0;                // rows of the micro-batch the tensors belong to
  const float* x = nullptr;    // that micro-batch's input
  const int* labels = nullptr;
  double grad_scale = 1.0;     // dz and grads hold grad_scale * dLoss/d.; dLoss is the mean over `norm_rows`
  int norm_rows = 0;
  bool grads_single_micro = true;  // grads hold only this micro-batch (enables the gradient probes)
  std::function<std::vector<float>(Tensor, int)> fetch;  // rows x dims[l], converted to float
  const float* params_before = nullptr;
  const float* opt_before = nullptr;
  const float* grads = nullptr;
  const float* params_after = nullptr;
  int t_before = 0;
  bool step_skipped = false;   // mixed precision skipped the update
  double rtol = 1e-4;          // relative to the magnitude bound (sum of |terms|)
};
struct VerifyResult {
  bool ok = true;
  std::string detail;
  double worst = 0;  // largest error / allowed ratio seen (1.0 = at tolerance)
};
VerifyResult verify_step(const StepView& v);

}  // namespace gtb::mlp
