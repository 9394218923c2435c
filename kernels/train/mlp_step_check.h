// The MLP step's side of the step check protocol (kernels/train/step_check.h), the same for every
// backend and every family that times an MLP step (train, parallel, pitfalls): its probe and case,
// verified from the backend's own tensors by verify_step (kernels/train/reference.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/train/reference.h"
#include "kernels/train/step_check.h"

namespace gtb::mlp {

// What a backend exposes to the check. The state getters copy (they are read before the step);
// after the step `grads` and `params` give a pointer valid until the next step, downloading into
// `storage` where the tensors are not on the host (the CPU backend ignores it and copies nothing).
struct StepProbe {
  std::function<std::vector<float>()> params_before, opt_before;
  std::function<ScaleState()> scale_state;  // loss scale, step and skip counts (scale 1 where unscaled)
  std::function<void()> poison;             // NaN-fill activations and gradients before the step
  std::function<double()> step;             // one step; returns its loss (synchronizes)
  std::function<const float*(std::vector<float>& storage)> grads, params_after;
  std::function<std::vector<float>(Tensor, int)> fetch;  // the checked micro-batch's Z, A, dZ of layer l
};

// The step's problem: the micro-batch whose tensors `fetch` returns and how its loss is normalised.
struct StepCase {
  const Config* cfg = nullptr;
  const float* x = nullptr;  // the checked micro-batch's input
  const int* labels = nullptr;
  int rows = 0;              // rows of that micro-batch
  int norm_rows = 0;         // the loss is the mean over this many rows (the whole batch)
  bool grads_single_micro = true;
  double rtol = 1e-4;        // see StepView::rtol
  // Mixed precision may skip the first steps (overflow at the initial loss scale): up to this many
  // steps are taken until one is applied; if none is, the check fails.
  int max_attempts = 1;
};

struct StepCheck {
  bool ok = false;
  std::string detail;  // for State::check
  double loss = 0;     // loss of the checked step
  // The state before the checked step and the scale state before and after it (a case replays
  // the step from there, e.g. a CUDA Graph against the eager step).
  std::vector<float> params_before, opt_before;
  ScaleState scale_before{}, scale_after{};
  bool skipped = false;  // the checked step was skipped (its check then proves only that nothing moved)
};

// The case of a step over the first `batch` rows of `data` in `micro` equal micro-batches: the
// last micro-batch is the one checked, the loss is normalised over the whole batch.
StepCase step_case(const Config& cfg, const Dataset& data, int batch, int micro = 1, double rtol = 1e-4);

StepCheck check_step_f64(const StepProbe& probe, const StepCase& c);

}  // namespace gtb::mlp
