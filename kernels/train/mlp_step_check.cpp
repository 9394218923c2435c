// The MLP step's float64 check: its case and the step protocol's verifier (see mlp_step_check.h).
#include "kernels/train/mlp_step_check.h"

#include <memory>
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
  // The protocol reads the counters twice an attempt (before, after); the whole scale state of the
  // last two reads is what a caller restores to replay the step.
  auto states = std::make_shared<std::vector<ScaleState>>();
  step::Probe p;
  p.params_before = probe.params_before;
  p.opt_before = probe.opt_before;
  p.counters = [&probe, states] {
    const ScaleState s = probe.scale_state();
    states->push_back(s);
    return step::Counters{double(s.scale), s.step, s.skipped};
  };
  p.poison = probe.poison;
  p.step = probe.step;
  p.grads = probe.grads;
  p.params_after = probe.params_after;
  step::Workload w;
  w.max_attempts = c.max_attempts;
  w.verify = [&](const step::Taken& t) {
    StepView v;
    v.cfg = c.cfg;
    v.rows = c.rows;
    v.x = c.x;
    v.labels = c.labels;
    v.grad_scale = t.before.scale;
    v.norm_rows = c.norm_rows;
    v.grads_single_micro = c.grads_single_micro;
    v.fetch = probe.fetch;
    v.params_before = t.params_before.data();
    v.opt_before = t.opt_before.data();
    v.grads = t.grads;
    v.params_after = t.params_after;
    v.t_before = t.before.step;
    v.step_skipped = t.skipped;
    v.rtol = c.rtol;
    const VerifyResult r = verify_step(v);
    return step::Verdict{r.ok, r.detail};
  };
  step::Result r = step::check_f64(p, w);
  StepCheck out;
  out.ok = r.ok;
  out.detail = std::move(r.detail);
  out.loss = r.taken.loss;
  out.params_before = std::move(r.taken.params_before);
  out.opt_before = std::move(r.taken.opt_before);
  out.skipped = r.taken.skipped;
  const std::size_t n = states->size();
  out.scale_before = (*states)[n - 2];
  out.scale_after = (*states)[n - 1];
  return out;
}

}  // namespace gtb::mlp
