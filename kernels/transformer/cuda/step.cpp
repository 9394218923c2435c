// GPU transformer step host code: buffers, the cuBLASLt plans, the forward/backward/optimizer
// sequence, graph capture and the per-piece instrumentation.
#include "kernels/transformer/cuda/step.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/common/cuda/check.h"
#include "kernels/common/errors.h"
#include "kernels/gemm/cuda/gemm_lt_choice.h"
#include "kernels/transformer/cuda/attention.h"
#include "kernels/transformer/cuda/elementwise.h"
#include "kernels/transformer/cuda/step_kernels.h"
#include "kernels/transformer/reference.h"

namespace gtb::cuda::xfmr {

using gtb::xfmr::P;

namespace {
cublasOperation_t op_of(bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; }
}  // namespace

// One cuBLASLt matmul: descriptors and the heuristic's first algorithm, made at first use (the
// checked step, before any timed sample) and kept.
struct GpuBlocks::LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~LtPlan() {
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

GpuBlocks::GpuBlocks(const Config& c, Attention attn, Precision precision, std::size_t cap_bytes)
    : cfg_(c), lay_(c), attn_(attn), prec_(precision), arena_(cap_bytes), stream_(), blas_(stream_.get()) {
  cfg_.validate();
  if (prec_ != Precision::fp32 && prec_ != Precision::tf32 && prec_ != Precision::bf16)
    throw std::invalid_argument(std::string("the GPU transformer step runs in fp32, tf32 or bf16, not ") +
                                gtb::to_string(prec_));
  if (attn_ == Attention::fused && !fused_attention_supported(cfg_.head_dim()))
    throw gtb::Skip("the fused attention kernels do not support head_dim " + std::to_string(cfg_.head_dim()));
  batch_ = gtb::xfmr::gpu::attention_batching(cfg_);
  const gtb::xfmr::gpu::Buffers b = gtb::xfmr::gpu::buffers(cfg_, attn_, prec_);
  const std::size_t T = std::size_t(cfg_.tokens()), d = std::size_t(cfg_.d_model);
  auto floats = [&](std::size_t n) { return static_cast<float*>(arena_.alloc(n * 4)); };
  cudaStream_t s = stream();
  params_ = floats(b.params), grads_ = floats(b.params), m_ = floats(b.params), v_ = floats(b.params);
  GTB_CUDA_CHECK(cudaMemsetAsync(params_, 0, b.params * 4, s));
  GTB_CUDA_CHECK(cudaMemsetAsync(grads_, 0, b.params * 4, s));
  if (b.bf16_weights) w16_ = arena_.alloc(b.bf16_weights * 2);
  t_dev_ = static_cast<int*>(arena_.alloc(sizeof(int)));
  for (int l = 0; l <= cfg_.layers; ++l) xs_.push_back(floats(T * d));
  for (int l = 0; l < cfg_.layers; ++l) {
    Layer L{};
    L.h1 = floats(T * d), L.qkv = floats(T * 3 * d), L.ctx = floats(T * d), L.x_mid = floats(T * d);
    L.h2 = floats(T * d), L.u = floats(T * 4 * d), L.g = floats(T * 4 * d);
    L.mean1 = floats(T), L.rstd1 = floats(T), L.mean2 = floats(T), L.rstd2 = floats(T);
    L.attn = floats(b.per_layer_attention);
    for (auto [p, n] : {std::pair<float*, std::size_t>{L.h1, T * d}, {L.qkv, T * 3 * d}, {L.ctx, T * d},
                        {L.x_mid, T * d}, {L.h2, T * d}, {L.u, T * 4 * d}, {L.g, T * 4 * d}, {L.mean1, T},
                        {L.rstd1, T}, {L.mean2, T}, {L.rstd2, T}, {L.attn, b.per_layer_attention}})
      activations_.push_back({p, n});
    layers_.push_back(L);
  }
  dx_ = floats(T * d), dx_mid_ = floats(T * d), dh_ = floats(T * d), dff_ = floats(T * 4 * d);
  dqkv_ = floats(T * 3 * d), tmp_ = floats(T * d), row_loss_ = floats(T);
  attn_scratch_ = floats(b.attention_scratch);
  target_ = floats(T * d);
  if (b.bf16_slot) slot_[0] = arena_.alloc(b.bf16_slot * 2), slot_[1] = arena_.alloc(b.bf16_slot * 2);
  workspace_ = arena_.alloc(b.workspace_bytes);
  for (int l = 1; l <= cfg_.layers; ++l) activations_.push_back({xs_[std::size_t(l)], T * d});
  for (auto [p, n] : {std::pair<float*, std::size_t>{dx_, T * d}, {dx_mid_, T * d}, {dh_, T * d}, {dff_, T * 4 * d},
                      {dqkv_, T * 3 * d}, {tmp_, T * d}, {row_loss_, T}, {attn_scratch_, b.attention_scratch}})
    activations_.push_back({p, n});
  GTB_CUBLAS_CHECK(cublasSetWorkspace(blas_.get(), workspace_, b.workspace_bytes));
  GTB_CUBLAS_CHECK(cublasLtCreate(&lt_));
  set_params(gtb::xfmr::init_params(cfg_, lay_));
  reset_optimizer();
}

GpuBlocks::~GpuBlocks() {
  graph_.reset();  // before the cuBLASLt handle its nodes were made with
  plans_.clear();
  if (lt_) cublasLtDestroy(lt_);
}

void GpuBlocks::load_data(const float* x, const float* target) {
  const std::size_t bytes = std::size_t(cfg_.tokens()) * std::size_t(cfg_.d_model) * 4;
  h2d_sync(xs_[0], x, bytes, stream());
  h2d_sync(target_, target, bytes, stream());
}

template <class F>
void GpuBlocks::op(Piece p, F&& f) {
  ++launches_;
  const bool timed = op_events_.open();
  op_events_.around(stream(), std::forward<F>(f));
  if (timed) event_piece_.push_back(p);
}

const void* GpuBlocks::operand(const float* src, std::size_t n, int slot) {
  if (!bf16()) return src;
  void* dst = slot_[slot];
  op(Piece::elementwise, [&] { to_bf16(src, dst, (long long)n, stream()); });
  return dst;
}

const void* GpuBlocks::weight(int l, P t) const {
  if (bf16()) return static_cast<const char*>(w16_) + lay_.at(l, t) * 2;
  return params_ + lay_.at(l, t);
}

// Row-major matrices through column-major cuBLAS: a row-major M x N matrix is its column-major
// transpose, so C^T = op(B)^T op(A)^T is computed with the operands swapped.
void GpuBlocks::mm(bool ta, bool tb, int M, int N, int K, const void* A, int lda, const void* B, int ldb, float* C,
                   int ldc, float beta) {
  const LtKey key{ta, tb, M, N, K, lda, ldb, ldc};
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    auto p = std::make_unique<LtPlan>();
    const cudaDataType_t in = bf16() ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = prec_ == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    GTB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, ct, CUDA_R_32F));
    const gtb::xfmr::gpu::ColumnMajorGemm g = gtb::xfmr::gpu::column_major(ta, tb, M, N, K, lda, ldb, ldc);
    const cublasOperation_t opa = op_of(g.trans_a), opb = op_of(g.trans_b);
    GTB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    GTB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->la, in, std::uint64_t(g.a_rows), std::uint64_t(g.a_cols), g.lda));
    GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lb, in, std::uint64_t(g.b_rows), std::uint64_t(g.b_cols), g.ldb));
    GTB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_32F, std::uint64_t(g.m), std::uint64_t(g.n), g.ldc));
    cublasLtMatmulPreference_t pref = nullptr;
    GTB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t res{};
    int returned = 0;
    const cublasStatus_t st = [&] {
      const std::uint64_t ws = gtb::xfmr::gpu::kWorkspaceBytes;  // the attribute is a uint64_t
      cublasStatus_t s =
          cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
      // The heuristic assumes 256-byte aligned operands unless told; a tensor of the flat parameter
      // buffer starts on a 64-byte boundary (32 bytes in its BF16 copy).
      const std::uint32_t align = 32;
      for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align);
      if (s != CUBLAS_STATUS_SUCCESS) return s;
      return cublasLtMatmulAlgoGetHeuristic(lt_, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &res, &returned);
    }();
    cublasLtMatmulPreferenceDestroy(pref);
    // The gemm family's rule (gemm_lt_choice.h): no algorithm for the problem skips the record with
    // the answer; any other failure (a wrong layout's INVALID_VALUE) is an error.
    gtb::cuda::LtHeuristicAnswer answer;
    answer.status = int(st);
    answer.status_name = cublasGetStatusName(st);
    answer.returned = returned;
    if (returned > 0) {
      answer.first_state = int(res.state);
      answer.first_state_name = cublasGetStatusName(res.state);
    }
    const gtb::cuda::LtChoice choice = gtb::cuda::choose_lt_algorithm(
        answer, std::string(gtb::to_string(prec_)) + " row-major " + (ta ? "A^T " : "") + (tb ? "B^T " : "") +
                    "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " lda=" +
                    std::to_string(lda) + " ldb=" + std::to_string(ldb) + " ldc=" + std::to_string(ldc));
    if (choice.kind == gtb::cuda::LtChoice::Kind::skip) throw gtb::Skip(choice.detail);
    if (choice.kind == gtb::cuda::LtChoice::Kind::fail) throw std::runtime_error(choice.detail);
    p->algo = res.algo;
    it = plans_.emplace(key, std::move(p)).first;
  }
  const LtPlan& p = *it->second;
  const float alpha = 1.0f;
  GTB_CUBLAS_CHECK(cublasLtMatmul(lt_, p.desc, &alpha, B, p.la, A, p.lb, &beta, C, p.lc, C, p.lc, &p.algo, workspace_,
                                  gtb::xfmr::gpu::kWorkspaceBytes, stream()));
}

void GpuBlocks::bmm(const gtb::xfmr::gpu::AttentionGemm& gm, const void* a, const void* b, float* c) {
  namespace xg = gtb::xfmr::gpu;
  const cudaDataType_t in = bf16() ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t ct = prec_ == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const float alpha = 1.0f, beta = 0.0f;
  const std::size_t e = es();
  const xg::View va = xg::view(cfg_, batch_, gm.a), vb = xg::view(cfg_, batch_, gm.b), vc = xg::view(cfg_, batch_, gm.c);
  const xg::ColumnMajorGemm g = xg::column_major(gm.ta, gm.tb, gm.M, gm.N, gm.K, va.ld, vb.ld, vc.ld);
  launches_ += batch_.calls - 1;  // op() counted one
  for (int i = 0; i < batch_.calls; ++i) {
    const char* pa = static_cast<const char*>(a) + std::size_t(va.offset + i * va.step) * e;
    const char* pb = static_cast<const char*>(b) + std::size_t(vb.offset + i * vb.step) * e;
    float* pc = c + std::size_t(vc.offset + i * vc.step);
    // cuBLAS's A is the row-major B (column_major()).
    GTB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas_.get(), op_of(g.trans_a), op_of(g.trans_b), g.m, g.n, g.k, &alpha,
                                                pb, in, g.lda, vb.stride, pa, in, g.ldb, va.stride, &beta, pc,
                                                CUDA_R_32F, g.ldc, vc.stride, batch_.count, ct, CUBLAS_GEMM_DEFAULT));
  }
}

void GpuBlocks::attention_forward(Layer& L) {
  const int S = cfg_.seq_len, d = cfg_.d_model, dh = cfg_.head_dim(), H = cfg_.heads, B = cfg_.batch;
  const float scale = 1.0f / std::sqrt(float(dh));
  cudaStream_t s = stream();
  if (attn_ == Attention::fused) {
    op(Piece::attention, [&] { fused_attention_forward(L.qkv, L.ctx, L.attn, B, S, H, dh, scale, s); });
    return;
  }
  const std::size_t T = std::size_t(cfg_.tokens()), probs = std::size_t(B) * std::size_t(H) * std::size_t(S) * S;
  const auto gemms = gtb::xfmr::gpu::attention_forward_gemms(cfg_);
  const void* qkv = operand(L.qkv, T * 3 * std::size_t(d), 1);
  op(Piece::attention, [&] { bmm(gemms[0], qkv, qkv, L.attn); });
  op(Piece::attention, [&] { causal_softmax(L.attn, B * H, S, scale, s); });
  const void* p = operand(L.attn, probs, 0);
  op(Piece::attention, [&] { bmm(gemms[1], p, qkv, L.ctx); });
}

void GpuBlocks::attention_backward(Layer& L, const float* dctx, float* dqkv) {
  const int S = cfg_.seq_len, d = cfg_.d_model, dh = cfg_.head_dim(), H = cfg_.heads, B = cfg_.batch;
  const float scale = 1.0f / std::sqrt(float(dh));
  cudaStream_t s = stream();
  if (attn_ == Attention::fused) {
    op(Piece::attention, [&] {
      fused_attention_backward(L.qkv, L.ctx, dctx, L.attn, attn_scratch_, dqkv, B, S, H, dh, scale, s);
    });
    return;
  }
  const std::size_t T = std::size_t(cfg_.tokens()), probs = std::size_t(B) * std::size_t(H) * std::size_t(S) * S;
  const auto gemms = gtb::xfmr::gpu::attention_backward_gemms(cfg_);
  // BF16 slots: P and dO first (dV), then Q K V replace P and dS replaces dO.
  const void* p = operand(L.attn, probs, 0);
  const void* dout = operand(dctx, T * std::size_t(d), 1);
  op(Piece::attention, [&] { bmm(gemms[0], p, dout, dqkv); });
  const void* qkv = operand(L.qkv, T * 3 * std::size_t(d), 0);
  float* dp = attn_scratch_;
  op(Piece::attention, [&] { bmm(gemms[1], dout, qkv, dp); });
  op(Piece::attention, [&] { causal_softmax_backward(L.attn, dp, B * H, S, scale, s); });
  const void* ds = operand(dp, probs, 1);
  op(Piece::attention, [&] { bmm(gemms[2], ds, qkv, dqkv); });
  op(Piece::attention, [&] { bmm(gemms[3], ds, qkv, dqkv); });
}

void GpuBlocks::forward() {
  const int T = int(cfg_.tokens()), d = cfg_.d_model, f = cfg_.ffn();
  const std::size_t Td = std::size_t(T) * std::size_t(d);
  cudaStream_t s = stream();
  for (int l = 0; l < cfg_.layers; ++l) {
    Layer& L = layers_[std::size_t(l)];
    const float* x = xs_[std::size_t(l)];
    float* out = xs_[std::size_t(l) + 1];
    op(Piece::elementwise, [&] {
      layer_norm_forward(x, L.h1, L.mean1, L.rstd1, par(l, P::ln1_g), par(l, P::ln1_b), T, d, cfg_.ln_eps, s);
    });
    const void* h1 = operand(L.h1, Td, 0);
    op(Piece::projections, [&] { mm(false, false, T, 3 * d, d, h1, d, weight(l, P::w_qkv), 3 * d, L.qkv, 3 * d); });
    op(Piece::elementwise, [&] { add_bias(L.qkv, par(l, P::b_qkv), T, 3 * d, s); });
    attention_forward(L);
    const void* ctx = operand(L.ctx, Td, 0);
    op(Piece::projections, [&] { mm(false, false, T, d, d, ctx, d, weight(l, P::w_o), d, tmp_, d); });
    op(Piece::elementwise, [&] { residual_add(L.x_mid, x, tmp_, par(l, P::b_o), T, d, s); });
    op(Piece::elementwise, [&] {
      layer_norm_forward(L.x_mid, L.h2, L.mean2, L.rstd2, par(l, P::ln2_g), par(l, P::ln2_b), T, d, cfg_.ln_eps, s);
    });
    const void* h2 = operand(L.h2, Td, 0);
    op(Piece::mlp, [&] { mm(false, false, T, f, d, h2, d, weight(l, P::w_1), f, L.u, f); });
    op(Piece::elementwise, [&] { bias_gelu(L.u, L.g, par(l, P::b_1), T, f, s); });
    const void* g = operand(L.g, std::size_t(T) * std::size_t(f), 0);
    op(Piece::mlp, [&] { mm(false, false, T, d, f, g, f, weight(l, P::w_2), d, tmp_, d); });
    op(Piece::elementwise, [&] { residual_add(out, L.x_mid, tmp_, par(l, P::b_2), T, d, s); });
  }
  op(Piece::elementwise, [&] { mse_loss(xs_[std::size_t(cfg_.layers)], target_, dx_, row_loss_, T, d, s); });
}

void GpuBlocks::backward() {
  const int T = int(cfg_.tokens()), d = cfg_.d_model, f = cfg_.ffn();
  const std::size_t Td = std::size_t(T) * std::size_t(d), Tf = std::size_t(T) * std::size_t(f);
  cudaStream_t s = stream();
  for (int l = cfg_.layers - 1; l >= 0; --l) {
    Layer& L = layers_[std::size_t(l)];
    // dx_ holds dL/d(layer output).
    op(Piece::elementwise, [&] { column_sums(dx_, grad(l, P::b_2), T, d, s); });
    const void* g = operand(L.g, Tf, 0);
    const void* dy = operand(dx_, Td, 1);
    op(Piece::mlp, [&] { mm(true, false, f, d, T, g, f, dy, d, grad(l, P::w_2), d); });
    op(Piece::mlp, [&] { mm(false, true, T, f, d, dy, d, weight(l, P::w_2), d, dff_, f); });
    op(Piece::elementwise, [&] { gelu_backward(dff_, L.u, (long long)Tf, s); });
    op(Piece::elementwise, [&] { column_sums(dff_, grad(l, P::b_1), T, f, s); });
    const void* h2 = operand(L.h2, Td, 0);
    const void* du = operand(dff_, Tf, 1);
    op(Piece::mlp, [&] { mm(true, false, d, f, T, h2, d, du, f, grad(l, P::w_1), f); });
    op(Piece::mlp, [&] { mm(false, true, T, d, f, du, f, weight(l, P::w_1), f, dh_, d); });
    op(Piece::elementwise, [&] {
      layer_norm_backward(dh_, L.x_mid, L.mean2, L.rstd2, par(l, P::ln2_g), dx_, dx_mid_, grad(l, P::ln2_g),
                          grad(l, P::ln2_b), T, d, s);
    });
    op(Piece::elementwise, [&] { column_sums(dx_mid_, grad(l, P::b_o), T, d, s); });
    const void* ctx = operand(L.ctx, Td, 0);
    const void* dm = operand(dx_mid_, Td, 1);
    op(Piece::projections, [&] { mm(true, false, d, d, T, ctx, d, dm, d, grad(l, P::w_o), d); });
    op(Piece::projections, [&] { mm(false, true, T, d, d, dm, d, weight(l, P::w_o), d, dh_, d); });
    attention_backward(L, dh_, dqkv_);  // dh_ holds dL/d(ctx) here
    op(Piece::elementwise, [&] { column_sums(dqkv_, grad(l, P::b_qkv), T, 3 * d, s); });
    const void* h1 = operand(L.h1, Td, 0);
    const void* dq = operand(dqkv_, Td * 3, 1);
    op(Piece::projections, [&] { mm(true, false, d, 3 * d, T, h1, d, dq, 3 * d, grad(l, P::w_qkv), 3 * d); });
    op(Piece::projections, [&] { mm(false, true, T, d, 3 * d, dq, 3 * d, weight(l, P::w_qkv), 3 * d, dh_, d); });
    op(Piece::elementwise, [&] {
      layer_norm_backward(dh_, xs_[std::size_t(l)], L.mean1, L.rstd1, par(l, P::ln1_g), dx_mid_, dx_,
                          grad(l, P::ln1_g), grad(l, P::ln1_b), T, d, s);
    });
  }
}

void GpuBlocks::step() {
  launches_ = 0;
  cudaStream_t s = stream();
  // Bias and layer-norm gradients accumulate through atomics: the whole buffer is cleared first.
  op(Piece::elementwise, [&] { GTB_CUDA_CHECK(cudaMemsetAsync(grads_, 0, lay_.total * 4, s)); });
  forward();
  backward();
  op(Piece::optimizer, [&] { advance_step(t_dev_, s); });
  op(Piece::optimizer, [&] {
    adamw_counted(params_, m_, v_, grads_, w16_, (long long)lay_.total, cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps,
                  cfg_.weight_decay, t_dev_, s);
  });
  launches_last_ = launches_;
}

void GpuBlocks::capture_graph() {
  graph_.capture(stream(), [this](cudaStream_t) { step(); });
}

void GpuBlocks::replay() { graph_.replay(stream(), "GpuBlocks"); }

double GpuBlocks::loss() const {
  const std::vector<float> l = d2h_sync(row_loss_, std::size_t(cfg_.tokens()), stream());
  double s = 0;
  for (float v : l) s += v;
  return s;
}

std::vector<float> GpuBlocks::params() const { return d2h_sync(params_, lay_.total, stream()); }
std::vector<float> GpuBlocks::grads() const { return d2h_sync(grads_, lay_.total, stream()); }
std::vector<float> GpuBlocks::adam_m() const { return d2h_sync(m_, lay_.total, stream()); }
std::vector<float> GpuBlocks::adam_v() const { return d2h_sync(v_, lay_.total, stream()); }
int GpuBlocks::steps_taken() const {
  int t = 0;
  GTB_CUDA_CHECK(cudaMemcpyAsync(&t, t_dev_, sizeof t, cudaMemcpyDeviceToHost, stream()));
  sync();
  return t;
}

void GpuBlocks::set_params(const std::vector<float>& p) {
  if (p.size() != lay_.total) throw std::invalid_argument("GpuBlocks::set_params: wrong size");
  sync();
  h2d_sync(params_, p.data(), p.size() * 4, stream());
  if (w16_) {
    to_bf16(params_, w16_, (long long)lay_.total, stream());
    sync();
  }
}

void GpuBlocks::reset_optimizer() {
  cudaStream_t s = stream();
  GTB_CUDA_CHECK(cudaMemsetAsync(m_, 0, lay_.total * 4, s));
  GTB_CUDA_CHECK(cudaMemsetAsync(v_, 0, lay_.total * 4, s));
  GTB_CUDA_CHECK(cudaMemsetAsync(t_dev_, 0, sizeof(int), s));
  sync();
}

void GpuBlocks::poison() {
  cudaStream_t s = stream();
  for (auto [p, n] : activations_) GTB_CUDA_CHECK(cudaMemsetAsync(p, 0xFF, n * 4, s));
  GTB_CUDA_CHECK(cudaMemsetAsync(grads_, 0xFF, lay_.total * 4, s));
  if (slot_[0]) {
    const std::size_t n = gtb::xfmr::gpu::buffers(cfg_, attn_, prec_).bf16_slot * 2;
    GTB_CUDA_CHECK(cudaMemsetAsync(slot_[0], 0xFF, n, s));
    GTB_CUDA_CHECK(cudaMemsetAsync(slot_[1], 0xFF, n, s));
  }
  sync();
}

PieceTimes GpuBlocks::pieces(int steps) {
  // The events exist before the first instrumented step (one step, untimed, says how many).
  if (launches_last_ == 0) step();
  const std::size_t need = 2 * std::size_t(launches_last_) * std::size_t(steps > 0 ? steps : 0);
  op_events_.reserve(need);
  sync();
  event_piece_.clear();
  op_events_.window([&] {
    for (int i = 0; i < steps; ++i) step();
    sync();
  });
  PieceTimes pt;
  pt.steps = steps;
  for (std::size_t i = 0; i < event_piece_.size(); ++i) pt.seconds[int(event_piece_[i])] += op_events_.seconds(i);
  return pt;
}

}  // namespace gtb::cuda::xfmr
