// CPU MLP training step: SGEMM (or, in BF16, the per-shape GEMM plan) for the GEMMs, fused OpenMP
// loops for everything else.
#include "kernels/train/cpu/mlp.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/common/clock.h"
#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/clones.h"
#include "kernels/common/cpu/mkl.h"
#include "kernels/common/cpu/parallel.h"
#include "kernels/common/cpu/rows.h"
#include "kernels/common/errors.h"
#include "kernels/common/random.h"
#include "kernels/common/verify.h"

namespace gtb::mlp {

void* HostAllocator::raw(std::size_t bytes) {
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  if (cap_ && used_ + rounded > cap_)
    throw gtb::OutOfMemory("host allocation of " + std::to_string(rounded) + " bytes over the cap of " +
                           std::to_string(cap_) + " bytes (" + std::to_string(used_) + " in use)");
  cpu::HostBuffer block;
  try {
    block = cpu::HostBuffer(rounded == 0 ? 64 : rounded, std::size_t(64));
  } catch (const std::bad_alloc&) {
    throw gtb::OutOfMemory("host allocation of " + std::to_string(rounded) + " bytes failed");
  }
  std::memset(block.get(), 0, block.bytes());
  void* p = block.get();
  blocks_.push_back(std::move(block));
  used_ += rounded;
  return p;
}
float* HostAllocator::floats(std::size_t n) { return static_cast<float*>(raw(n * sizeof(float))); }
int* HostAllocator::ints(std::size_t n) { return static_cast<int*>(raw(n * sizeof(int))); }

namespace {
constexpr double kThreadGradBudget = 4e9;  // bytes of per-thread gradient copies rows mode may use
}  // namespace

int CpuMlp::threads() { return omp_get_max_threads(); }

void CpuMlp::set_threading(Threading t) {
  threading_ = t;
  cpu::set_blas_threads(t == Threading::blas ? omp_get_max_threads() : 1);
  const int nt = omp_get_max_threads();
  // The per-thread gradient copies are bounded: past the budget the split way is used instead.
  const double copies_bytes = double(nt - 1) * double(lay_.total) * sizeof(float);
  if (t == Threading::rows && thread_grads_.empty() && nt > 1 && max_rows_ >= kRowsPerThread * nt &&
      copies_bytes <= kThreadGradBudget)
    for (int i = 1; i < nt; ++i) thread_grads_.push_back(alloc_.floats(lay_.total));
}

// C = A B (+ beta C), row-major. In split mode one slice per thread (cpu::split_gemm); tiny products
// and BLAS threading run as one call.
void CpuMlp::gemm(int site, bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                  float beta, float* c, int ldc) const {
  // The BF16 plan slices its own products (and rounds the operands as they enter them).
  const double t0 = host_seconds();
  if (prec_ == Precision::bf16) {
    plan_.run_sized(std::size_t(site), m, n, k, a, b, beta, c);
  } else {
    cpu::split_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, threading_ == Threading::blas,
                    [&](int mm, int nn, const float* as, const float* bs, float* cs) {
                      leaf_gemm(site, ta, tb, mm, nn, k, as, lda, bs, ldb, beta, cs, ldc);
                    });
  }
  pieces_.gemm += host_seconds() - t0;
}

void CpuMlp::leaf_gemm(int site, bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b,
                       int ldb, float beta, float* c, int ldc) const {
  if (prec_ == Precision::fp32) return cpu::sgemm(lib_, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  // Rows mode: the site's product on this thread's rows (the plan's sites are inner there).
  plan_.run_sized(std::size_t(site), m, n, k, a, b, beta, c);
}

bool CpuMlp::rows_mode(int rows) const {
  const int nt = omp_get_max_threads();
  return threading_ == Threading::rows && nt > 1 && rows >= kRowsPerThread * nt &&
         thread_grads_.size() == std::size_t(nt - 1);
}

void CpuMlp::set_plan_machine(const cpu::plan::Machine& m) {
  plan_machine_ = m;
  plan_key_.clear();
}

void CpuMlp::plan_gemms(int rows) {
  const bool inner = rows_mode(rows);
  const int nt = omp_get_max_threads();
  // Rows mode: each thread's share of the rows, one product per thread inside the step's region.
  const int m = inner ? (rows + nt - 1) / nt : rows;
  const std::string key = std::to_string(m) + (inner ? " inner " : " whole ") + std::to_string(nt);
  if (key == plan_key_) return;
  std::vector<cpu::plan::Shape> shapes;
  const auto& d = lay_.dims;
  for (int l = 1; l <= lay_.layers(); ++l) {
    const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
    const std::string L = "layer" + std::to_string(l);
    shapes.push_back({L + ".fwd", false, false, m, out, in, in, out, out, inner});
    shapes.push_back({L + ".dW", true, false, in, out, m, in, out, out, inner});
    // The first layer's input gradient is never computed: its site is planned at a token size.
    if (l > 1) shapes.push_back({L + ".dX", false, true, m, in, out, out, out, in, inner});
    else shapes.push_back({L + ".dX (unused)", false, true, 1, 1, 1, 1, 1, 1, inner});
  }
  plan_.choose(shapes, true, true, plan_machine_ ? *plan_machine_ : cpu::plan::this_machine());
  plan_key_ = key;
}

CpuMlp::CpuMlp(const Config& c, int max_micro_batch, std::size_t cap_bytes)
    : cfg_(c), lay_(c), max_rows_(max_micro_batch), alloc_(cap_bytes) {
  cfg_.validate();
  if (max_micro_batch < 1) throw std::invalid_argument("CpuMlp: batch must be >= 1");
  params_ = alloc_.floats(lay_.total);
  grads_ = alloc_.floats(lay_.total);
  opt_ = alloc_.floats(lay_.total * std::size_t(opt_state_count()));
  const int L = lay_.layers();
  const auto rows = std::size_t(max_rows_);
  a_.push_back(nullptr);  // A_0 is the caller's input
  for (int l = 1; l <= L; ++l) {
    const auto d = std::size_t(lay_.dims[std::size_t(l)]);
    z_.push_back(alloc_.floats(rows * d));
    a_.push_back(l < L ? alloc_.floats(rows * d) : nullptr);
    dz_.push_back(alloc_.floats(rows * d));
  }
  const std::vector<float> p = init_params(cfg_, lay_);
  std::copy(p.begin(), p.end(), params_);
  set_threading(threading_);
}

void CpuMlp::set_params(const std::vector<float>& p) {
  if (p.size() != lay_.total) throw std::invalid_argument("CpuMlp::set_params: wrong size");
  std::copy(p.begin(), p.end(), params_);
}
void CpuMlp::set_gemm_lib(cpu::GemmLib lib) {
  if (!cpu::gemm_lib_available(lib))
    throw std::invalid_argument(std::string("CpuMlp: GEMM library ") + cpu::to_string(lib) + " is not available" +
                                (lib == cpu::GemmLib::mkl ? " (" + cpu::mkl::unavailable_reason() + ")" : ""));
  lib_ = lib;
}
void CpuMlp::set_precision(Precision p) {
  if (p != Precision::fp32 && p != Precision::bf16)
    throw std::invalid_argument(std::string("CpuMlp: precision ") + to_string(p) + " (the CPU step runs fp32 or bf16)");
  prec_ = p;
}

void CpuMlp::reset_optimizer() {
  std::fill(opt_, opt_ + lay_.total * std::size_t(opt_state_count()), 0.0f);
  t_ = 0;
}

void CpuMlp::poison() {
  for (int l = 1; l <= lay_.layers(); ++l) {
    const std::size_t n = std::size_t(max_rows_) * std::size_t(lay_.dims[std::size_t(l)]);
    gtb::poison(z_[std::size_t(l - 1)], n);
    gtb::poison(dz_[std::size_t(l - 1)], n);
    if (a_[std::size_t(l)]) gtb::poison(a_[std::size_t(l)], n);
    // Only the tensors themselves: the zero padding between them is never written by a step.
    const auto in = std::size_t(lay_.dims[std::size_t(l - 1)]), out = std::size_t(lay_.dims[std::size_t(l)]);
    gtb::poison(grads_ + lay_.w[std::size_t(l - 1)], in * out);
    gtb::poison(grads_ + lay_.b[std::size_t(l - 1)], out);
  }
}

namespace {
// The elementwise loops are compiled for AVX-512 and AVX2 as well as the baseline and picked at run
// time (the project builds for the generic x86-64 target). The activation is fixed per loop (one
// lambda each) so that each loop is branch-free and vectorizes.

GTB_CPU_CLONES void bias_act_rows(Act act, float* z, float* a, const float* b, std::size_t rows, std::size_t cols) {
  if (act == Act::relu)
    gtb::cpu::bias_then_rows(z, a, b, 0, rows, cols, [](float v) { return act_forward(Act::relu, v); });
  else
    gtb::cpu::bias_then_rows(z, a, b, 0, rows, cols, [](float v) { return act_forward(Act::gelu, v); });
}

// g = g * act'(z) in place, with the column sums of the result added to part.
template <Act A>
inline void act_backward_rows_t(float* __restrict g, const float* __restrict z, float* __restrict part,
                                std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* __restrict gr = g + r * cols;
    const float* __restrict zr = z + r * cols;
#pragma omp simd
    for (std::size_t j = 0; j < cols; ++j) {
      const float v = gr[j] * act_derivative(A, zr[j]);
      gr[j] = v;
      part[j] += v;
    }
  }
}
GTB_CPU_CLONES void act_backward_rows(Act act, float* g, const float* z, float* part, std::size_t rows,
                                      std::size_t cols) {
  if (act == Act::relu)
    act_backward_rows_t<Act::relu>(g, z, part, rows, cols);
  else
    act_backward_rows_t<Act::gelu>(g, z, part, rows, cols);
}

GTB_CPU_CLONES void sgd_range(float* __restrict w, float* __restrict v, const float* __restrict g, std::size_t n,
                              float lr, float mu) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    sgd_momentum(w[i], v[i], g[i], lr, mu);
    v[i] = flush_denormal(v[i]);
  }
}
GTB_CPU_CLONES void adam_range(float* __restrict w, float* __restrict m, float* __restrict v,
                               const float* __restrict g, std::size_t n, float lr, float b1, float b2, float eps,
                               float c1, float c2) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    adam(w[i], m[i], v[i], g[i], lr, b1, b2, eps, c1, c2);
    m[i] = flush_denormal(m[i]);
    v[i] = flush_denormal(v[i]);
  }
}

using cpu::parallel_ranges;

// Adds (or stores) per-thread partial column sums into out.
void reduce_parts(const std::vector<float>& parts, int nparts, std::size_t cols, float* out, bool accumulate) {
  for (std::size_t j = 0; j < cols; ++j) {
    float s = accumulate ? out[j] : 0.0f;
    for (int t = 0; t < nparts; ++t) s += parts[std::size_t(t) * cols + j];
    out[j] = s;
  }
}
}  // namespace

double softmax_xent_rows(float* z, float* dz, const float* b, const int* labels, std::size_t n, std::size_t classes,
                         float scale, float* colsum) {
  double loss = 0;
  for (std::size_t r = 0; r < n; ++r) {
    float* zr = z + r * classes;
    float* gr = dz + r * classes;
    for (std::size_t j = 0; j < classes; ++j) zr[j] += b[j];
    loss += double(softmax_xent_row<float>(
        int(classes), labels[r], scale, [&](int j) { return zr[j]; }, [&](int j, float g) { gr[j] = g; }));
    for (std::size_t j = 0; j < classes; ++j) colsum[j] += gr[j];
  }
  return loss;
}

void CpuMlp::forward_backward(const float* x, const int* labels, int rows, float grad_scale, bool accumulate,
                              double& loss_sum) {
  const int L = lay_.layers();
  const Act act = cfg_.act;
  const auto& d = lay_.dims;
  const int nt = omp_get_max_threads();
  const auto R = std::size_t(rows);
  a_[0] = const_cast<float*>(x);  // read only; A_0 is never written
  // Forward: Z_l = A_{l-1} W_l (GEMM), then Z_l += b_l and A_l = act(Z_l) in one pass.
  for (int l = 1; l <= L; ++l) {
    const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
    const auto O = std::size_t(out);
    float* z = z_[std::size_t(l - 1)];
    gemm(site_index(l, fwd), false, false, rows, out, in, a_[std::size_t(l - 1)], in, params_ + lay_.w[std::size_t(l - 1)], out, 0.0f, z,
         out);
    const float* b = params_ + lay_.b[std::size_t(l - 1)];
    if (l < L) {
      float* a = a_[std::size_t(l)];
      parallel_ranges(R, double(R) * double(O), [&](std::size_t r0, std::size_t r1, int) {
        bias_act_rows(act, z + r0 * O, a + r0 * O, b, r1 - r0, O);
      });
    }
  }
  // Loss: bias of the last layer, softmax cross-entropy, dZ_L and its column sums (db_L).
  {
    const auto CC = std::size_t(d[std::size_t(L)]);
    float* z = z_[std::size_t(L - 1)];
    float* dz = dz_[std::size_t(L - 1)];
    const float* b = params_ + lay_.b[std::size_t(L - 1)];
    std::vector<double> thread_loss(std::size_t(nt), 0.0);
    colsum_scratch_.assign(std::size_t(nt) * CC, 0.0f);
    parallel_ranges(R, double(R) * double(CC) * 8.0, [&](std::size_t r0, std::size_t r1, int t) {
      thread_loss[std::size_t(t)] = softmax_xent_rows(z + r0 * CC, dz + r0 * CC, b, labels + r0, r1 - r0, CC, grad_scale,
                                                      colsum_scratch_.data() + std::size_t(t) * CC);
    });
    reduce_parts(colsum_scratch_, nt, CC, grads_ + lay_.b[std::size_t(L - 1)], accumulate);
    for (double v : thread_loss) loss_sum += v;
  }
  // Backward: dW_l = A_{l-1}^T dZ_l; dA_{l-1} = dZ_l W_l^T, then dZ_{l-1} = dA (.) act'(Z) with db.
  for (int l = L; l >= 1; --l) {
    const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
    const float* dz = dz_[std::size_t(l - 1)];
    gemm(site_index(l, dw), true, false, in, out, rows, a_[std::size_t(l - 1)], in, dz, out, accumulate ? 1.0f : 0.0f,
         grads_ + lay_.w[std::size_t(l - 1)], out);
    if (l == 1) break;
    float* dprev = dz_[std::size_t(l - 2)];
    gemm(site_index(l, dx), false, true, rows, in, out, dz, out, params_ + lay_.w[std::size_t(l - 1)], out, 0.0f, dprev, in);
    const float* zp = z_[std::size_t(l - 2)];
    const auto I = std::size_t(in);
    colsum_scratch_.assign(std::size_t(nt) * I, 0.0f);
    parallel_ranges(R, double(R) * double(I), [&](std::size_t r0, std::size_t r1, int t) {
      act_backward_rows(act, dprev + r0 * I, zp + r0 * I, colsum_scratch_.data() + std::size_t(t) * I, r1 - r0, I);
    });
    reduce_parts(colsum_scratch_, nt, I, grads_ + lay_.b[std::size_t(l - 2)], accumulate);
  }
}

void sgd_update(float* w, float* v, const float* g, std::size_t n, float lr, float mu) { sgd_range(w, v, g, n, lr, mu); }

void CpuMlp::optimizer_step() {
  const double t0 = host_seconds();
  struct Lap {
    double t0;
    double& into;
    ~Lap() { into += host_seconds() - t0; }
  } lap{t0, pieces_.optimizer};
  ++t_;
  const std::size_t n = lay_.total;
  if (cfg_.optim == Optim::sgd) {
    parallel_ranges(n, double(n), [&](std::size_t b, std::size_t e, int) {
      sgd_range(params_ + b, opt_ + b, grads_ + b, e - b, cfg_.lr, cfg_.momentum);
    });
  } else {
    float c1, c2;
    adam_corrections(t_, cfg_.beta1, cfg_.beta2, c1, c2);
    float* m = opt_;
    float* v = opt_ + n;
    parallel_ranges(n, double(n) * 4.0, [&](std::size_t b, std::size_t e, int) {
      adam_range(params_ + b, m + b, v + b, grads_ + b, e - b, cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps, c1, c2);
    });
  }
}

namespace {
GTB_CPU_CLONES void add_range(float* __restrict dst, const float* __restrict src, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}
}  // namespace

float CpuMlp::step_rows(const float* x, const int* labels, int batch, int micro_batches, int parts) {
  // Thread 0's GEMM calls, timed (the pieces are thread 0's view of the shared region).
  auto timed_leaf = [this](int thread, const auto& call) {
    if (thread != 0) return call();
    const double t0 = host_seconds();
    call();
    pieces_.gemm += host_seconds() - t0;
  };
  const int L = lay_.layers();
  const Act act = cfg_.act;
  const auto& d = lay_.dims;
  const int rows = batch / micro_batches;
  const float scale = 1.0f / float(batch);
  const auto in0 = std::size_t(cfg_.input);
  const std::size_t n = lay_.total;
  ++t_;
  float c1 = 1, c2 = 1;
  if (cfg_.optim == Optim::adam) adam_corrections(t_, cfg_.beta1, cfg_.beta2, c1, c2);
  std::vector<double> tloss(std::size_t(parts), 0.0);
#pragma omp parallel num_threads(parts)
  {
    const int t = omp_get_thread_num();
    const std::size_t r0 = std::size_t(rows) * std::size_t(t) / std::size_t(parts);
    const std::size_t r1 = std::size_t(rows) * std::size_t(t + 1) / std::size_t(parts);
    const int nr = int(r1 - r0);
    float* gw = t == 0 ? grads_ : thread_grads_[std::size_t(t - 1)];
    for (int m = 0; m < micro_batches; ++m) {
      const bool acc = m > 0;
      const std::size_t base = std::size_t(m) * std::size_t(rows) + r0;
      const float* xm = x + base * in0;
      const float* aprev = xm;
      for (int l = 1; l <= L; ++l) {
        const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
        const auto O = std::size_t(out);
        float* z = z_[std::size_t(l - 1)] + r0 * O;
        timed_leaf(t, [&] {
          leaf_gemm(site_index(l, fwd), false, false, nr, out, in, aprev, in, params_ + lay_.w[std::size_t(l - 1)], out,
                    0.0f, z, out);
        });
        if (l < L) {
          float* a = a_[std::size_t(l)] + r0 * O;
          bias_act_rows(act, z, a, params_ + lay_.b[std::size_t(l - 1)], std::size_t(nr), O);
          aprev = a;
        }
      }
      {
        const auto CC = std::size_t(d[std::size_t(L)]);
        float* z = z_[std::size_t(L - 1)] + r0 * CC;
        float* dz = dz_[std::size_t(L - 1)] + r0 * CC;
        const float* b = params_ + lay_.b[std::size_t(L - 1)];
        float* db = gw + lay_.b[std::size_t(L - 1)];
        if (!acc) std::fill(db, db + CC, 0.0f);
        tloss[std::size_t(t)] += softmax_xent_rows(z, dz, b, labels + base, std::size_t(nr), CC, scale, db);
      }
      for (int l = L; l >= 1; --l) {
        const int in = d[std::size_t(l - 1)], out = d[std::size_t(l)];
        const auto I = std::size_t(in), O = std::size_t(out);
        const float* ap = l == 1 ? xm : a_[std::size_t(l - 1)] + r0 * I;
        const float* dz = dz_[std::size_t(l - 1)] + r0 * O;
        timed_leaf(t, [&] {
          leaf_gemm(site_index(l, dw), true, false, in, out, nr, ap, in, dz, out, acc ? 1.0f : 0.0f,
                    gw + lay_.w[std::size_t(l - 1)], out);
        });
        if (l == 1) break;
        float* dprev = dz_[std::size_t(l - 2)] + r0 * I;
        timed_leaf(t, [&] {
          leaf_gemm(site_index(l, dx), false, true, nr, in, out, dz, out, params_ + lay_.w[std::size_t(l - 1)], out, 0.0f,
                    dprev, in);
        });
        float* db = gw + lay_.b[std::size_t(l - 2)];
        if (!acc) std::fill(db, db + I, 0.0f);
        act_backward_rows(act, dprev, z_[std::size_t(l - 2)] + r0 * I, db, std::size_t(nr), I);
      }
    }
#pragma omp barrier
    const double t_update = t == 0 ? host_seconds() : 0.0;
    // Each thread sums the gradients of its share of the parameters and updates that share.
    const std::size_t b = n * std::size_t(t) / std::size_t(parts) / 16 * 16;
    const std::size_t e = t + 1 == parts ? n : n * std::size_t(t + 1) / std::size_t(parts) / 16 * 16;
    for (int k = 1; k < parts; ++k) add_range(grads_ + b, thread_grads_[std::size_t(k - 1)] + b, e - b);
    if (cfg_.optim == Optim::sgd)
      sgd_range(params_ + b, opt_ + b, grads_ + b, e - b, cfg_.lr, cfg_.momentum);
    else
      adam_range(params_ + b, opt_ + b, opt_ + n + b, grads_ + b, e - b, cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps, c1,
                 c2);
    if (t == 0) pieces_.optimizer += host_seconds() - t_update;
  }
  last_rows_ = rows;
  x_ = x + std::size_t(micro_batches - 1) * std::size_t(rows) * in0;
  a_[0] = const_cast<float*>(x_);
  double loss = 0;
  for (double v : tloss) loss += v;
  return float(loss / double(batch));
}

float CpuMlp::step(const float* x, const int* labels, int batch, int micro_batches) {
  if (batch < 1 || micro_batches < 1 || batch % micro_batches != 0)
    throw std::invalid_argument("CpuMlp::step: batch " + std::to_string(batch) + " is not a positive multiple of " +
                                std::to_string(micro_batches) + " micro-batches");
  const int rows = batch / micro_batches;
  if (rows > max_rows_)
    throw std::invalid_argument("CpuMlp::step: micro-batch of " + std::to_string(rows) + " rows over the " +
                                std::to_string(max_rows_) + " the model was built for");
  // A step this small finishes before a second thread would pay for waking up (and on a busy
  // machine every synchronization can cost a scheduler time slice): run it on one thread.
  const cpu::OneThreadScope one_thread(step_flops(lay_, batch) < kSerialStepFlops);
  const int nt = omp_get_max_threads();
  if (prec_ == Precision::bf16) plan_gemms(rows);
  struct Whole {
    double t0;
    Pieces& p;
    ~Whole() {
      p.total += host_seconds() - t0;
      ++p.steps;
    }
  } whole{host_seconds(), pieces_};
  if (rows_mode(rows)) return step_rows(x, labels, batch, micro_batches, nt);
  double loss_sum = 0;
  const float scale = 1.0f / float(batch);
  const auto in = std::size_t(cfg_.input);
  for (int m = 0; m < micro_batches; ++m)
    forward_backward(x + std::size_t(m) * std::size_t(rows) * in, labels + std::size_t(m) * std::size_t(rows), rows,
                     scale, m > 0, loss_sum);
  last_rows_ = rows;
  x_ = x + std::size_t(micro_batches - 1) * std::size_t(rows) * in;
  optimizer_step();
  return float(loss_sum / double(batch));
}

StepProbe step_probe(CpuMlp& m, std::function<double()> step, int rows) {
  StepProbe p;
  const std::size_t total = m.layout().total;
  p.params_before = [&m, total] { return std::vector<float>(m.params(), m.params() + total); };
  p.opt_before = [&m, total] {
    return std::vector<float>(m.opt_state(), m.opt_state() + total * std::size_t(m.opt_state_count()));
  };
  p.scale_state = [&m] { return ScaleState{1.0f, 0, 0, 0, m.steps_taken()}; };
  p.poison = [&m] { m.poison(); };
  p.step = std::move(step);
  p.grads = [&m](std::vector<float>&) { return m.grads(); };
  p.params_after = [&m](std::vector<float>&) { return static_cast<const float*>(m.params()); };
  p.fetch = [&m, rows](Tensor t, int l) {
    const float* src = t == Tensor::z ? m.z(l) : (t == Tensor::a ? m.a(l) : m.dz(l));
    return std::vector<float>(src, src + std::size_t(rows) * std::size_t(m.layout().dims[std::size_t(l)]));
  };
  return p;
}

}  // namespace gtb::mlp
