// The GPU training loop with one habit in place: the train family's step through its public API.
#include "kernels/pitfalls/cuda/step_loop.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/train/cuda/mlp.h"

namespace gtb::pitfalls {

namespace gm = gtb::cuda::mlp;

namespace {
constexpr std::uint64_t kDataSeed = 8086;  // the train family's data seed

gm::DataSource source_of(Copy c) {
  if (c == Copy::batch) return gm::DataSource::pageable;
  if (c == Copy::batch_pinned) return gm::DataSource::pinned;
  return gm::DataSource::device;
}
}  // namespace

GpuStepLoop::GpuStepLoop(const gtb::mlp::Config& cfg, int batch, Copy copy, int sync_every)
    : cfg_(cfg), batch_(batch), copy_(copy), every_(sync_every) {
  if (batch < 1) throw std::invalid_argument("pitfalls: batch must be >= 1, got " + std::to_string(batch));
  if (sync_every < 0) throw std::invalid_argument("pitfalls: the loss-read interval must be >= 0");
  data_ = gtb::mlp::make_clusters(batch, cfg.input, cfg.classes, kDataSeed);
  model_ = std::make_unique<gm::GpuMlp>(cfg, batch, 1, gm::Precision::fp32);
  // The train family's step copies pinned or pageable data at the start of every step itself.
  model_->load_data(data_.x.data(), data_.y.data(), source_of(copy));
  if (copy == Copy::weights) host_weights_ = model_->params();
}

GpuStepLoop::~GpuStepLoop() = default;

void GpuStepLoop::one_step() {
  // A pageable upload of the weights, as a host-resident model moved to the GPU: synchronous.
  if (copy_ == Copy::weights) model_->set_params(host_weights_);
  model_->step();
  if (copy_ == Copy::activation) sink_ = model_->fetch(gtb::mlp::Tensor::a, 1);
  ++count_;
  if (every_ > 0 && count_ % every_ == 0) {
    last_loss_ = model_->loss();
    ++reads_;
  }
}

gtb::mlp::VerifyResult GpuStepLoop::verify_first_step() {
  gtb::mlp::StepProbe probe = gm::step_probe(*model_, [&] { one_step(); });
  // With weight copies the step starts from the host copy, which one_step uploads first.
  if (copy_ == Copy::weights) probe.params_before = [&] { return host_weights_; };
  const gtb::mlp::StepCase c = gtb::mlp::step_case(cfg_, data_, batch_);  // FP32: the train family's tolerance
  const gtb::mlp::StepCheck chk = gtb::mlp::check_step_f64(probe, c);
  gtb::mlp::VerifyResult r{chk.ok, chk.detail, 0};
  if (r.ok && copy_ == Copy::activation && sink_ != model_->fetch(gtb::mlp::Tensor::a, 1)) {
    r.ok = false;
    r.detail = "the copied activation differs from the model's";
  }
  return r;
}

void GpuStepLoop::run(std::int64_t steps) {
  for (std::int64_t s = 0; s < steps; ++s) one_step();
}

void GpuStepLoop::sync() const { model_->sync(); }

}  // namespace gtb::pitfalls
