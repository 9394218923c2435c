// The float64 check of one training step (see step_check.h).
#include "kernels/train/step_check.h"

#include <cmath>
#include <stdexcept>

namespace gtb::mlp {

StepCase step_case(const Config& cfg, const Dataset& data, int batch, int micro, double rtol) {
  if (batch < 1 || micro < 1 || batch % micro != 0 || batch > data.rows)
    throw std::invalid_argument("step_case: a batch of " + std::to_string(batch) + " rows in " + std::to_string(micro) +
                                " micro-batches over " + std::to_string(data.rows) + " rows of data");
  const int rows = batch / micro;
  StepCase c;
  c.cfg = &cfg;
  c.rows = rows;
  c.x = data.x.data() + std::size_t(batch - rows) * std::size_t(cfg.input);
  c.labels = data.y.data() + (batch - rows);
  c.norm_rows = batch;
  c.grads_single_micro = micro == 1;
  c.rtol = rtol;
  return c;
}

StepCheck check_step_f64(const StepProbe& probe, const StepCase& c) {
  if (!c.cfg || !c.x || !c.labels || c.rows < 1 || c.norm_rows < c.rows || c.max_attempts < 1)
    throw std::invalid_argument("check_step_f64: the step case is incomplete");
  if (!probe.params_before || !probe.opt_before || !probe.scale_state || !probe.poison || !probe.step ||
      !probe.grads || !probe.params_after || !probe.fetch)
    throw std::invalid_argument("check_step_f64: the backend's probe is incomplete");
  StepCheck out;
  for (int attempt = 0; attempt < c.max_attempts; ++attempt) {
    out.params_before = probe.params_before();
    out.opt_before = probe.opt_before();
    out.scale_before = probe.scale_state();
    probe.poison();
    out.loss = probe.step();
    out.scale_after = probe.scale_state();
    out.skipped = out.scale_after.skipped > out.scale_before.skipped;
    if (!out.skipped) break;
  }
  std::vector<float> grads_storage, params_storage;
  StepView v;
  v.cfg = c.cfg;
  v.rows = c.rows;
  v.x = c.x;
  v.labels = c.labels;
  v.grad_scale = out.scale_before.scale;
  v.norm_rows = c.norm_rows;
  v.grads_single_micro = c.grads_single_micro;
  v.fetch = probe.fetch;
  v.params_before = out.params_before.data();
  v.opt_before = out.opt_before.data();
  v.grads = probe.grads(grads_storage);
  v.params_after = probe.params_after(params_storage);
  v.t_before = out.scale_before.step;
  v.step_skipped = out.skipped;
  v.rtol = c.rtol;
  const VerifyResult res = verify_step(v);
  out.ok = res.ok && std::isfinite(out.loss);
  out.detail = out.ok ? res.detail : (res.ok ? "loss is not finite" : res.detail);
  if (out.ok && out.skipped) {
    // Only a skipped step was seen: the check above then proves nothing about the step's math, and
    // a step that overflows at every scale (a NaN in the forward pass) would be timed as valid.
    out.ok = false;
    out.detail = "every one of " + std::to_string(c.max_attempts) + " steps overflowed and was skipped (loss scale now " +
                 std::to_string(out.scale_after.scale) + ")";
  }
  return out;
}

}  // namespace gtb::mlp
