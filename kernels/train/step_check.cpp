// The float64 check protocol of one training step (see step_check.h).
#include "kernels/train/step_check.h"

#include <cmath>
#include <stdexcept>

namespace gtb::step {

Result check_f64(const Probe& probe, const Workload& w) {
  if (!w.verify || w.max_attempts < 1) throw std::invalid_argument("step::check_f64: the workload is incomplete");
  if (!probe.params_before || !probe.opt_before || !probe.counters || !probe.poison || !probe.step || !probe.grads ||
      !probe.params_after)
    throw std::invalid_argument("step::check_f64: the backend's probe is incomplete");
  Result out;
  Taken& t = out.taken;
  for (int attempt = 0; attempt < w.max_attempts; ++attempt) {
    t.params_before = probe.params_before();
    t.opt_before = probe.opt_before();
    t.before = probe.counters();
    probe.poison();
    t.loss = probe.step();
    t.after = probe.counters();
    t.skipped = t.after.skipped > t.before.skipped;
    if (!t.skipped) break;
  }
  std::vector<float> grads_storage, params_storage;
  t.grads = probe.grads(grads_storage);
  t.params_after = probe.params_after(params_storage);
  const Verdict v = w.verify(t);
  t.grads = t.params_after = nullptr;  // the storage dies with this call
  out.ok = v.ok && std::isfinite(t.loss);
  out.detail = out.ok ? v.detail : (v.ok ? "loss is not finite" : v.detail);
  if (out.ok && t.skipped) {
    // Only a skipped step was seen: the check above then proves nothing about the step's math, and
    // a step that overflows at every scale (a NaN in the forward pass) would be timed as valid.
    out.ok = false;
    out.detail = "every one of " + std::to_string(w.max_attempts) + " steps overflowed and was skipped (loss scale now " +
                 std::to_string(t.after.scale) + ")";
  }
  return out;
}

double relative_norm_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("relative_norm_diff: sizes differ");
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    num += d * d;
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / (den > 0 ? den : 1.0));
}

std::string replay_mismatch(const std::vector<float>& replay_grads, const std::vector<float>& replay_params,
                            const std::vector<float>& eager_grads, const std::vector<float>& eager_params, double tol) {
  const double dg = relative_norm_diff(replay_grads, eager_grads), dp = relative_norm_diff(replay_params, eager_params);
  if (dg <= tol && dp <= tol) return "";
  return "graph replay differs from the eager step: gradients " + std::to_string(dg) + ", params " +
         std::to_string(dp) + " (relative norm)";
}

}  // namespace gtb::step
