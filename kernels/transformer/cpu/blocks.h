// The transformer block stack's training step on the CPU: GEMMs through the per-shape library plan,
// attention materialised or fused, every elementwise pass fused and vectorised over OpenMP threads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/precision.h"
#include "kernels/train/cpu/mlp.h"  // HostAllocator: the byte count and the memory cap
#include "kernels/transformer/block.h"
#include "kernels/common/cpu/gemm_plan.h"
#include "kernels/transformer/reference.h"

namespace gtb::xfmr {

// The GEMM plan both CPU training steps share (kernels/common/cpu/gemm_plan.h).
namespace cpu_gemm = gtb::cpu::plan;

// Seconds spent in each piece of the step (fork-join phases timed at their boundaries, summed over
// the steps since the last reset). attention: scores, softmax, weighted sum and their backward;
// projections: the QKV and output GEMMs; mlp: the two MLP GEMMs; elementwise: layer norms,
// biases, GELU, residuals, the loss, BF16 casts; optimizer: AdamW.
struct PieceTimes {
  double attention = 0, projections = 0, mlp = 0, elementwise = 0, optimizer = 0;
  int steps = 0;
  double total() const { return attention + projections + mlp + elementwise + optimizer; }
};

class CpuBlocks {
 public:
  // precision: fp32, or bf16 (autocast-style: BF16 GEMM operands, FP32 accumulation, FP32 master
  // weights, layer norms, softmax and residual stream). cap_bytes > 0 caps the model's allocations
  // (over it: gtb::OutOfMemory). The GEMM plan is chosen here (outside any timed region).
  CpuBlocks(const Config& c, Attention attn, Precision precision, std::size_t cap_bytes = 0);
  ~CpuBlocks();

  // One AdamW step on batch x seq_len tokens (x, target: tokens x d_model). Returns the loss.
  float step(const float* x, const float* target);

  const Config& config() const { return cfg_; }
  const Layout& layout() const { return lay_; }
  Attention attention() const { return attn_; }
  Precision precision() const { return prec_; }
  const float* params() const { return params_; }
  const float* grads() const { return grads_; }
  const float* adam_m() const { return m_; }
  const float* adam_v() const { return v_; }
  int steps_taken() const { return t_; }
  void set_params(const std::vector<float>& p);
  void reset_optimizer();
  void poison();  // NaN-fill activations, gradients (not the padding) before a checked step
  std::size_t bytes() const { return alloc_.bytes(); }
  const cpu_gemm::Plan& gemm_plan() const { return plan_; }
  const PieceTimes& pieces() const { return pieces_; }
  void reset_pieces() { pieces_ = PieceTimes{}; }
  static int threads();

 private:
  struct Layer;
  void forward(const float* x, const float* target, double& loss);
  void backward(const float* x);
  void attention_forward(Layer& L);
  void attention_backward(Layer& L, const float* dout, float* dqkv);
  void optimizer_step();
  float* w(int l, P t) const { return (bf16() ? w16_ : params_) + lay_.at(l, t); }
  float* g(int l, P t) const { return grads_ + lay_.at(l, t); }
  const float* master(int l, P t) const { return params_ + lay_.at(l, t); }
  bool bf16() const { return prec_ == Precision::bf16; }

  Config cfg_;
  Layout lay_;
  Attention attn_;
  Precision prec_;
  mlp::HostAllocator alloc_;
  float *params_ = nullptr, *grads_ = nullptr, *m_ = nullptr, *v_ = nullptr, *w16_ = nullptr;
  std::vector<Layer> layers_;
  float* y_ = nullptr;       // output of the last block
  float *dx_ = nullptr, *dx1_ = nullptr, *tmp_ = nullptr, *dff_ = nullptr, *dqkv_ = nullptr, *dobuf_ = nullptr;
  float* attn_scratch_ = nullptr;  // per thread: materialised S x S; fused 2 x kFusedBlock x S
  std::size_t scratch_per_thread_ = 0;
  float* partials_ = nullptr;      // per thread column sums (4 x 4d)
  cpu_gemm::Plan plan_;
  PieceTimes pieces_;
  int t_ = 0;
};

}  // namespace gtb::xfmr
