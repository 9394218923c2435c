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
  const std::vector<float> p0 = copy_ == Copy::weights ? host_weights_ : model_->params();
  const std::vector<float> o0 = model_->opt_state();
  const int t0 = model_->scale_state().step;
  model_->poison();
  one_step();
  const double loss = model_->loss();
  const std::vector<float> g1 = model_->grads(), p1 = model_->params();
  gtb::mlp::StepView v;
  v.cfg = &cfg_;
  v.rows = batch_;
  v.x = data_.x.data();
  v.labels = data_.y.data();
  v.norm_rows = batch_;
  v.fetch = [&](gtb::mlp::Tensor t, int l) { return model_->fetch(t, l); };
  v.params_before = p0.data();
  v.opt_before = o0.data();
  v.grads = g1.data();
  v.params_after = p1.data();
  v.t_before = t0;
  v.rtol = 1e-4;  // FP32 (the train family's tolerance)
  gtb::mlp::VerifyResult r = gtb::mlp::verify_step(v);
  if (r.ok && !std::isfinite(loss)) {
    r.ok = false;
    r.detail = "loss is not finite";
  }
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
