// The protocol every training step's float64 check follows, whatever the model and the backend:
// snapshot the state, poison the outputs, take the step (again while mixed precision skips it),
// hand what the step left to the workload's own float64 verifier, and require a finite loss.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gtb::step {

// The optimizer's counters around a step: the loss scale (1 where unscaled), steps applied
// (Adam's t) and steps skipped on overflow.
struct Counters {
  double scale = 1.0;
  int step = 0;
  int skipped = 0;
};

// What a backend exposes. The state getters copy (they are read before the step); after the step
// `grads` and `params_after` give a pointer valid until the next step, downloading into `storage`
// where the tensors are not on the host. `counters` is read exactly twice an attempt: before
// `poison` and after `step`.
struct Probe {
  std::function<std::vector<float>()> params_before, opt_before;
  std::function<Counters()> counters;
  std::function<void()> poison;   // NaN-fill activations and gradients before the step
  std::function<double()> step;   // one step; returns its loss (synchronizes)
  std::function<const float*(std::vector<float>& storage)> grads, params_after;
};

// `grads` or `params_after` of a backend whose tensors are not on the host: `download` copies them,
// into the caller's storage.
inline std::function<const float*(std::vector<float>&)> downloaded(std::function<std::vector<float>()> download) {
  return [download = std::move(download)](std::vector<float>& storage) {
    storage = download();
    return static_cast<const float*>(storage.data());
  };
}

// What the checked step left: the state before it, its loss, and the backend's results.
struct Taken {
  std::vector<float> params_before, opt_before;
  Counters before, after;
  double loss = 0;
  bool skipped = false;  // the update was skipped: the verifier proves only that nothing moved
  const float* grads = nullptr;
  const float* params_after = nullptr;
};

struct Verdict {
  bool ok = false;
  std::string detail;
};

// A step workload as the check sees it: its float64 verifier of a taken step (which reads its own
// inputs and, through its own accessors, the backend's activations) and how many steps may be
// taken until one is applied (mixed precision may skip the first at the initial loss scale).
struct Workload {
  std::function<Verdict(const Taken&)> verify;
  int max_attempts = 1;
};

struct Result {
  bool ok = false;
  std::string detail;  // for State::check
  Taken taken;         // grads and params_after are null here: they were valid during verify only
};

// Throws std::invalid_argument when the probe or the workload is incomplete.
Result check_f64(const Probe& probe, const Workload& workload);

// ||a - b|| / ||b|| (1 in place of a zero ||b||).
double relative_norm_diff(const std::vector<float>& a, const std::vector<float>& b);

// A step replayed from a captured graph against the eager step taken from the same state: empty
// when its gradients and parameters agree within `tol` (relative norm: atomics may sum in another
// order), else a sentence saying by how much they differ.
std::string replay_mismatch(const std::vector<float>& replay_grads, const std::vector<float>& replay_params,
                            const std::vector<float>& eager_grads, const std::vector<float>& eager_params, double tol);

// Captures the model's step as a CUDA graph, replays it once from the state the eager step started
// from and compares it with that step's gradients and parameters (tolerance 1e-5 in FP32, 1e-3 in
// mixed precision). Appends "; graph replay matches eager" to `detail`, or replaces it with the
// mismatch; true when they agree.
template <class Model>
bool replay_matches(Model& model, const std::vector<float>& eager_grads, const std::vector<float>& eager_params,
                    bool fp32, std::string& detail) {
  model.capture_graph();
  model.replay();
  const std::string differs =
      replay_mismatch(model.grads(), model.params(), eager_grads, eager_params, fp32 ? 1e-5 : 1e-3);
  detail = differs.empty() ? detail + "; graph replay matches eager" : differs;
  return differs.empty();
}

}  // namespace gtb::step
