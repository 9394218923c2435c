// GPU MLP step host code: buffers, cuBLAS calls, the op sequence, graph capture and instrumentation.
#include "kernels/train/cuda/mlp.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "kernels/common/clock.h"
#include "kernels/common/cuda/check.h"
#include "kernels/common/errors.h"

namespace gtb::cuda::mlp {

using gtb::mlp::Optim;
using gtb::mlp::ScaleState;
using gtb::mlp::Tensor;

namespace {
constexpr std::size_t kCublasWorkspace = 32u << 20;
constexpr float kInitialFp16Scale = 65536.0f;
constexpr int kGrowthInterval = 2000;

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}
// Setup fills are ordered on the model's stream, as the setup copies (h2d_sync): the stream is
// non-blocking, so plain cudaMemset on the legacy default stream would not be ordered before the
// step's kernels.
void fill(void* dst, int value, std::size_t bytes, cudaStream_t s) {
  GTB_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, s));
}
}  // namespace

DType storage_type(Precision p) {
  return p == Precision::fp16 ? DType::f16 : (p == Precision::bf16 ? DType::bf16 : DType::f32);
}

void* DeviceArena::alloc(std::size_t bytes) {
  const std::size_t rounded = (bytes + 255) / 256 * 256;
  if (cap_ && used_ + rounded > cap_)
    throw gtb::OutOfMemory("device allocation of " + std::to_string(rounded) + " bytes over the cap of " +
                           std::to_string(cap_) + " bytes (" + std::to_string(used_) + " in use)");
  bufs_.emplace_back(rounded == 0 ? 256 : rounded);  // throws gtb::OutOfMemory on cudaMalloc failure
  used_ += rounded;
  return bufs_.back().get();
}

GpuMlp::GpuMlp(const Config& c, int batch, int micro_batches, Precision p, std::size_t cap_bytes)
    : cfg_(c), lay_(c), batch_(batch), micro_(micro_batches), rows_(0), prec_(p), st_(storage_type(p)),
      arena_(cap_bytes), stream_(), blas_(stream_.get()) {
  cfg_.validate();
  if (std::find(std::begin(kTrainPrecisions), std::end(kTrainPrecisions), p) == std::end(kTrainPrecisions))
    throw std::invalid_argument(std::string("GpuMlp: ") + to_string(p) + " is not a training precision");
  if (batch < 1 || micro_batches < 1 || batch % micro_batches != 0)
    throw std::invalid_argument("GpuMlp: batch " + std::to_string(batch) + " is not a positive multiple of " +
                                std::to_string(micro_batches) + " micro-batches");
  rows_ = batch / micro_batches;
  const std::size_t n = lay_.total, es = dtype_bytes(st_);
  const int nopt = cfg_.optim == Optim::adam ? 2 : 1;
  params_ = static_cast<float*>(arena_.alloc(n * 4));
  grads_ = static_cast<float*>(arena_.alloc(n * 4));
  opt_ = static_cast<float*>(arena_.alloc(n * 4 * std::size_t(nopt)));
  fill(opt_, 0, n * 4 * std::size_t(nopt), stream());
  fill(grads_, 0, n * 4, stream());
  if (is_mixed(prec_)) wlow_ = arena_.alloc(n * es);
  const auto B = std::size_t(batch_), in = std::size_t(cfg_.input);
  x_ = static_cast<float*>(arena_.alloc(B * in * 4));
  if (is_mixed(prec_)) xlow_ = arena_.alloc(B * in * es);
  y_ = static_cast<int*>(arena_.alloc(B * sizeof(int)));
  row_loss_ = static_cast<float*>(arena_.alloc(B * 4));
  ss_ = static_cast<ScaleState*>(arena_.alloc(sizeof(ScaleState)));
  const int L = lay_.layers();
  a_.push_back(nullptr);
  for (int l = 1; l <= L; ++l) {
    const std::size_t bytes = std::size_t(rows_) * std::size_t(lay_.dims[std::size_t(l)]) * es;
    z_.push_back(arena_.alloc(bytes));
    a_.push_back(l < L ? arena_.alloc(bytes) : nullptr);
    dz_.push_back(arena_.alloc(bytes));
  }
  void* ws = arena_.alloc(kCublasWorkspace);
  GTB_CUBLAS_CHECK(cublasSetWorkspace(blas_.get(), ws, kCublasWorkspace));
  set_params(gtb::mlp::init_params(cfg_, lay_));
  ScaleState s{};
  s.scale = prec_ == Precision::fp16 ? kInitialFp16Scale : 1.0f;
  set_scale_state(s);
}

GpuMlp::~GpuMlp() = default;

void GpuMlp::load_data(const float* x, const int* labels, DataSource src) {
  const std::size_t xb = std::size_t(batch_) * std::size_t(cfg_.input) * 4, yb = std::size_t(batch_) * sizeof(int);
  src_ = src;
  switch (src) {
    case DataSource::device:
      h2d_sync(x_, x, xb, stream());
      h2d_sync(y_, labels, yb, stream());
      host_x_ = nullptr, host_y_ = nullptr;
      break;
    case DataSource::pinned:
      pinned_x_ = PinnedBuffer(xb);
      pinned_y_ = PinnedBuffer(yb);
      std::memcpy(pinned_x_.get(), x, xb);
      std::memcpy(pinned_y_.get(), labels, yb);
      host_x_ = pinned_x_.as<float>(), host_y_ = pinned_y_.as<int>();
      break;
    case DataSource::pageable:
      pageable_x_.assign(x, x + xb / 4);
      pageable_y_.assign(labels, labels + batch_);
      host_x_ = pageable_x_.data(), host_y_ = pageable_y_.data();
      break;
  }
}

template <class F>
void GpuMlp::op(F&& f) {
  ++launches_;
  op_events_.around(stream(), std::forward<F>(f));
}

// Row-major tensors through column-major cuBLAS: a row-major M x N matrix is its column-major
// transpose, so every call below computes the transposed product with swapped operands.
void GpuMlp::gemm(bool ta, bool tb, int m, int n, int k, const void* a, int lda, const void* b, int ldb, float beta,
                  void* c, int ldc, bool out_f32) {
  const float alpha = 1.0f;
  const cudaDataType_t in_t = cuda_type(st_), out_t = out_f32 ? CUDA_R_32F : in_t;
  const cublasComputeType_t ct = prec_ == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  GTB_CUBLAS_CHECK(cublasGemmEx(blas_.get(), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                                &alpha, a, in_t, lda, b, in_t, ldb, &beta, c, out_t, ldc, ct, CUBLAS_GEMM_DEFAULT));
}

void GpuMlp::step() {
  launches_ = 0;
  for (int m = 0; m < micro_; ++m) {
    forward(m);
    backward(m);
  }
  update();
  launches_last_ = launches_;
}

void GpuMlp::forward(int m) {
  cudaStream_t s = stream();
  const int L = lay_.layers();
  const auto& d = lay_.dims;
  const std::size_t es = dtype_bytes(st_), in0 = std::size_t(cfg_.input);
  const bool mixed = is_mixed(prec_);
  if (m == 0) {
    if (src_ != DataSource::device) {
      if (!host_x_) throw std::logic_error("GpuMlp::step: no data loaded");
      op([&] {
        GTB_CUDA_CHECK(cudaMemcpyAsync(x_, host_x_, std::size_t(batch_) * in0 * 4, cudaMemcpyHostToDevice, s));
      });
      op([&] { GTB_CUDA_CHECK(cudaMemcpyAsync(y_, host_y_, std::size_t(batch_) * sizeof(int), cudaMemcpyHostToDevice, s)); });
    }
    if (mixed) op([&] { to_lowp(st_, x_, xlow_, std::size_t(batch_) * in0, s); });
    // Bias gradients accumulate through atomics: clear them (one contiguous range) once per step.
    op([&] {
      GTB_CUDA_CHECK(cudaMemsetAsync(grads_ + lay_.bias_begin, 0, (lay_.total - lay_.bias_begin) * 4, s));
    });
  }
  const char* xin = static_cast<const char*>(mixed ? xlow_ : static_cast<void*>(x_));
  const char* wbase = static_cast<const char*>(mixed ? wlow_ : static_cast<void*>(params_));
  ScaleState* ss_mixed = mixed ? ss_ : nullptr;
  const void* x_m = xin + std::size_t(m) * std::size_t(rows_) * in0 * es;
  a_[0] = const_cast<void*>(x_m);
  for (int l = 1; l <= L; ++l) {
    const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
    const void* W = wbase + lay_.w[std::size_t(l - 1)] * es;
    op([&] { gemm(false, false, out, rows_, in, W, out, a_[std::size_t(l - 1)], in, 0.0f, z_[std::size_t(l - 1)], out, false); });
    if (l < L)
      op([&] {
        bias_act(st_, z_[std::size_t(l - 1)], a_[std::size_t(l)], params_ + lay_.b[std::size_t(l - 1)], rows_, out,
                 cfg_.act, s);
      });
  }
  op([&] {
    softmax_xent(st_, z_[std::size_t(L - 1)], params_ + lay_.b[std::size_t(L - 1)], y_ + std::size_t(m) * std::size_t(rows_),
                 dz_[std::size_t(L - 1)], grads_ + lay_.b[std::size_t(L - 1)], row_loss_ + std::size_t(m) * std::size_t(rows_),
                 rows_, d[std::size_t(L)], 1.0f / float(batch_), ss_mixed, s);
  });
}

void GpuMlp::backward_layer(int l, int m) {
  if (l < 1 || l > lay_.layers()) throw std::invalid_argument("GpuMlp::backward_layer: no layer " + std::to_string(l));
  cudaStream_t s = stream();
  const auto& d = lay_.dims;
  const std::size_t es = dtype_bytes(st_);
  const bool mixed = is_mixed(prec_);
  const char* wbase = static_cast<const char*>(mixed ? wlow_ : static_cast<void*>(params_));
  ScaleState* ss_mixed = mixed ? ss_ : nullptr;
  const float beta = m > 0 ? 1.0f : 0.0f;
  const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
  op([&] {
    gemm(false, true, out, in, rows_, dz_[std::size_t(l - 1)], out, a_[std::size_t(l - 1)], in, beta,
         grads_ + lay_.w[std::size_t(l - 1)], out, true);
  });
  if (l == 1) return;
  const void* W = wbase + lay_.w[std::size_t(l - 1)] * es;
  op([&] { gemm(true, false, in, rows_, out, W, out, dz_[std::size_t(l - 1)], out, 0.0f, dz_[std::size_t(l - 2)], in, false); });
  op([&] {
    act_backward_db(st_, dz_[std::size_t(l - 2)], z_[std::size_t(l - 2)], grads_ + lay_.b[std::size_t(l - 2)], rows_,
                    in, cfg_.act, ss_mixed, s);
  });
}

void GpuMlp::backward(int m) {
  for (int l = lay_.layers(); l >= 1; --l) backward_layer(l, m);
}

void GpuMlp::update() {
  cudaStream_t s = stream();
  const bool mixed = is_mixed(prec_);
  const bool adam_opt = cfg_.optim == Optim::adam;
  const ScaleState* ss_opt = (mixed || adam_opt) ? ss_ : nullptr;
  op([&] {
    if (adam_opt)
      adam(params_, opt_, opt_ + lay_.total, grads_, wlow_, st_, lay_.total, cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps,
           ss_opt, s);
    else
      sgd(params_, opt_, grads_, wlow_, st_, lay_.total, cfg_.lr, cfg_.momentum, ss_opt, s);
  });
  if (mixed || adam_opt) op([&] { scale_end(ss_, prec_ == Precision::fp16, kGrowthInterval, s); });
}

void GpuMlp::capture_graph() {
  if (src_ == DataSource::pageable)
    throw std::invalid_argument("GpuMlp::capture_graph: copies from pageable memory cannot be captured");
  graph_.capture(stream(), [this](cudaStream_t) { step(); });
}

void GpuMlp::replay() { graph_.replay(stream(), "GpuMlp"); }

void GpuMlp::sync() const { stream_.sync(); }

double GpuMlp::loss() const {
  const std::vector<float> l = d2h_sync(row_loss_, static_cast<std::size_t>(batch_), stream());
  double s = 0;
  for (float v : l) s += v;
  return s / double(batch_);
}

std::vector<float> GpuMlp::fetch(Tensor t, int l) const {
  if (l < 1 || l > lay_.layers() || (t == Tensor::a && l == lay_.layers()))
    throw std::invalid_argument("GpuMlp::fetch: no such tensor at layer " + std::to_string(l));
  sync();
  const void* src = t == Tensor::z ? z_[std::size_t(l - 1)] : (t == Tensor::a ? a_[std::size_t(l)] : dz_[std::size_t(l - 1)]);
  const std::size_t n = std::size_t(rows_) * std::size_t(lay_.dims[std::size_t(l)]);
  std::vector<float> out(n);
  if (st_ == DType::f32) {
    GTB_CUDA_CHECK(cudaMemcpy(out.data(), src, n * 4, cudaMemcpyDeviceToHost));
    return out;
  }
  std::vector<std::uint16_t> raw(n);
  GTB_CUDA_CHECK(cudaMemcpy(raw.data(), src, n * 2, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i)
    out[i] = st_ == DType::f16 ? gtb::mlp::half_bits_to_float(raw[i]) : gtb::mlp::bf16_bits_to_float(raw[i]);
  return out;
}

std::vector<float> GpuMlp::params() const { return d2h_sync(params_, lay_.total, stream()); }
std::vector<float> GpuMlp::grads() const { return d2h_sync(grads_, lay_.total, stream()); }
std::vector<float> GpuMlp::opt_state() const {
  return d2h_sync(opt_, lay_.total * (cfg_.optim == Optim::adam ? 2 : 1), stream());
}
void GpuMlp::set_params(const std::vector<float>& p) {
  if (p.size() != lay_.total) throw std::invalid_argument("GpuMlp::set_params: wrong size");
  sync();
  h2d_sync(params_, p.data(), p.size() * 4, stream());
  if (wlow_) {
    to_lowp(st_, params_, wlow_, lay_.total, stream());
    sync();
  }
}
void GpuMlp::set_opt_state(const std::vector<float>& o) {
  if (o.size() != lay_.total * (cfg_.optim == Optim::adam ? 2u : 1u))
    throw std::invalid_argument("GpuMlp::set_opt_state: wrong size");
  sync();
  h2d_sync(opt_, o.data(), o.size() * 4, stream());
}
ScaleState GpuMlp::scale_state() const {
  sync();
  ScaleState s{};
  GTB_CUDA_CHECK(cudaMemcpy(&s, ss_, sizeof s, cudaMemcpyDeviceToHost));
  return s;
}
void GpuMlp::set_scale_state(const ScaleState& s) {
  sync();
  h2d_sync(ss_, &s, sizeof s, stream());
}

void GpuMlp::poison() {
  sync();
  const std::size_t es = dtype_bytes(st_);
  for (int l = 1; l <= lay_.layers(); ++l) {
    const std::size_t bytes = std::size_t(rows_) * std::size_t(lay_.dims[std::size_t(l)]) * es;
    fill(z_[std::size_t(l - 1)], 0xFF, bytes, stream());
    fill(dz_[std::size_t(l - 1)], 0xFF, bytes, stream());
    if (a_[std::size_t(l)]) fill(a_[std::size_t(l)], 0xFF, bytes, stream());
    // Only the tensors themselves: the zero padding between them is never written by a step.
    const auto in = std::size_t(lay_.dims[std::size_t(l - 1)]), out = std::size_t(lay_.dims[std::size_t(l)]);
    fill(grads_ + lay_.w[std::size_t(l - 1)], 0xFF, in * out * 4, stream());
    fill(grads_ + lay_.b[std::size_t(l - 1)], 0xFF, out * 4, stream());
  }
  fill(row_loss_, 0xFF, std::size_t(batch_) * 4, stream());
  sync();
}

double GpuMlp::busy_fraction(int steps) {
  // Every event the window needs exists before the clock starts: creating them inside it (two per
  // operation, ~120 a step) would count as idle time and bias the fraction low. The operations per
  // step do not depend on the data, so one step (untimed, if none ran yet) says how many.
  if (launches_last_ == 0) step();
  const std::size_t need = 2 * std::size_t(launches_last_) * std::size_t(std::max(steps, 0));
  op_events_.reserve(need);
  sync();
  double wall = 0;
  op_events_.window([&] {
    const double t0 = gtb::host_seconds();
    for (int i = 0; i < steps; ++i) step();
    sync();
    wall = gtb::host_seconds() - t0;
  });
  double busy = 0;
  for (std::size_t i = 0; i < op_events_.ops(); ++i) busy += op_events_.seconds(i);
  return wall > 0 ? busy / wall : 0.0;
}

std::vector<KernelInfo> GpuMlp::kernel_info() const {
  std::vector<KernelInfo> v = fwd_kernel_info(st_, rows_, cfg_.width);
  for (auto& k : bwd_kernel_info(st_, rows_, cfg_.width, cfg_.classes)) v.push_back(k);
  for (auto& k : opt_kernel_info(st_, cfg_.optim == Optim::adam, lay_.total)) v.push_back(k);
  return v;
}

gtb::mlp::StepProbe step_probe(GpuMlp& m, std::function<void()> step) {
  gtb::mlp::StepProbe p;
  p.params_before = [&m] { return m.params(); };
  p.opt_before = [&m] { return m.opt_state(); };
  p.scale_state = [&m] { return m.scale_state(); };
  p.poison = [&m] { m.poison(); };
  p.step = [&m, step = std::move(step)] {
    if (step)
      step();
    else
      m.step();
    return m.loss();
  };
  p.grads = gtb::step::downloaded([&m] { return m.grads(); });
  p.params_after = gtb::step::downloaded([&m] { return m.params(); });
  p.fetch = [&m](gtb::mlp::Tensor t, int l) { return m.fetch(t, l); };
  return p;
}

}  // namespace gtb::cuda::mlp
