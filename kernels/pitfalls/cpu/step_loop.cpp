// The CPU training loop with one habit in place: the train family's step through its public API.
#include "kernels/pitfalls/cpu/step_loop.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gtb::pitfalls {

namespace {
constexpr std::uint64_t kDataSeed = 8086;  // the train family's data seed
}

CpuStepLoop::CpuStepLoop(const mlp::Config& cfg, int batch, Copy copy, int sync_every)
    : cfg_(cfg), batch_(batch), copy_(copy), every_(sync_every), model_(cfg, batch) {
  if (batch < 1) throw std::invalid_argument("pitfalls: batch must be >= 1, got " + std::to_string(batch));
  if (sync_every < 0) throw std::invalid_argument("pitfalls: the loss-read interval must be >= 0");
  if (copy == Copy::batch_pinned) throw std::invalid_argument("pitfalls: pinned memory is a GPU notion");
  data_ = mlp::make_clusters(batch, cfg.input, cfg.classes, kDataSeed);
  if (copy == Copy::batch) {
    staged_x_.resize(data_.x.size());
    staged_y_.resize(data_.y.size());
  }
  if (copy == Copy::weights) host_weights_.assign(model_.params(), model_.params() + model_.layout().total);
}

float CpuStepLoop::one_step() {
  const float* x = data_.x.data();
  const int* y = data_.y.data();
  if (copy_ == Copy::batch) {
    std::copy(data_.x.begin(), data_.x.end(), staged_x_.begin());
    std::copy(data_.y.begin(), data_.y.end(), staged_y_.begin());
    x = staged_x_.data();
    y = staged_y_.data();
  } else if (copy_ == Copy::weights) {
    model_.set_params(host_weights_);
  }
  const float loss = model_.step(x, y, batch_);
  if (copy_ == Copy::activation) {
    const float* a = model_.a(1);
    sink_.assign(a, a + std::size_t(batch_) * std::size_t(cfg_.width));
  }
  ++count_;
  if (every_ > 0 && count_ % every_ == 0) {
    last_loss_ = loss;
    ++reads_;
  }
  return loss;
}

mlp::VerifyResult CpuStepLoop::verify_first_step() {
  mlp::StepProbe probe = mlp::step_probe(model_, [&] { return double(one_step()); }, batch_);
  // With weight copies the step starts from the host copy, which one_step uploads first.
  if (copy_ == Copy::weights) probe.params_before = [&] { return host_weights_; };
  const mlp::StepCase c = mlp::step_case(cfg_, data_, batch_);
  const mlp::StepCheck chk = mlp::check_step_f64(probe, c);
  mlp::VerifyResult r{chk.ok, chk.detail, 0};
  if (r.ok && copy_ == Copy::activation && (sink_.empty() || !std::equal(sink_.begin(), sink_.end(), model_.a(1)))) {
    r.ok = false;
    r.detail = "the copied activation differs from the model's";
  }
  return r;
}

void CpuStepLoop::run(std::int64_t steps) {
  for (std::int64_t s = 0; s < steps; ++s) one_step();
}

}  // namespace gtb::pitfalls
