// The transformer block stack's training step on the GPU: cuBLASLt for the projections and the MLP,
// strided-batched cuBLAS GEMMs for materialised attention or the fused kernels of attention.h,
// gtb's own elementwise kernels and AdamW; eager or replayed as a CUDA Graph; fp32, tf32 or bf16
// mixed. Host C++ (compiled only with CUDA).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/common/cuda/blas.h"
#include "kernels/common/cuda/graph.h"
#include "kernels/common/cuda/memory.h"
#include "kernels/common/cuda/step_events.h"
#include "kernels/common/precision.h"
#include "kernels/train/cuda/mlp.h"  // DeviceArena: the high-water mark and the memory cap
#include "kernels/transformer/block.h"
#include "kernels/transformer/cuda/step_plan.h"

namespace gtb::cuda::xfmr {

using gtb::xfmr::Attention;
using gtb::xfmr::Config;
using gtb::xfmr::Layout;

// Device seconds of each piece of the step, summed over the instrumented steps (events around
// every operation, so the gaps between operations are in none). attention: scores, softmax,
// weighted sum and their backward (or the fused kernels); projections: QKV and output GEMMs; mlp:
// the two MLP GEMMs; elementwise: layer norms, biases, GELU, residuals, the loss, bias gradients,
// BF16 casts of GEMM operands, the gradient clear; optimizer: AdamW (and the BF16 weight copy).
enum class Piece : int { attention, projections, mlp, elementwise, optimizer, count };
struct PieceTimes {
  double seconds[int(Piece::count)] = {};
  int steps = 0;
  double operator[](Piece p) const { return seconds[int(p)]; }
  double total() const {
    double s = 0;
    for (double v : seconds) s += v;
    return s;
  }
};

class GpuBlocks {
 public:
  // precision: fp32; tf32 (FP32 operands, TF32 tensor-core GEMMs); bf16 (BF16 GEMM operands:
  // weight copies and activations cast as a GEMM reads them, FP32 accumulation, master weights,
  // layer norms, softmax, residual stream). cap_bytes > 0 caps the model's device allocations
  // (over it: gtb::OutOfMemory, as for a failed cudaMalloc). Throws gtb::Skip where the fused
  // kernels do not support the head width.
  GpuBlocks(const Config& c, Attention attn, Precision precision, std::size_t cap_bytes = 0);
  ~GpuBlocks();
  GpuBlocks(const GpuBlocks&) = delete;
  GpuBlocks& operator=(const GpuBlocks&) = delete;

  void load_data(const float* x, const float* target);  // tokens x d_model each, copied to the device
  void step();           // enqueue one AdamW step on stream() (asynchronous)
  void capture_graph();  // capture step() once
  void replay();         // enqueue the captured step
  bool has_graph() const { return graph_.captured(); }
  std::size_t graph_nodes() const { return graph_.nodes(); }
  void sync() const { stream_.sync(); }

  double loss() const;  // of the last step (synchronizes)
  std::vector<float> params() const;
  std::vector<float> grads() const;
  std::vector<float> adam_m() const;
  std::vector<float> adam_v() const;
  int steps_taken() const;
  void set_params(const std::vector<float>& p);
  void reset_optimizer();  // moments and the step count to zero
  void poison();           // NaN-fill activations, scratch and gradients

  // `steps` eager steps with events around every operation (outside the timed samples).
  PieceTimes pieces(int steps);

  const Config& config() const { return cfg_; }
  const Layout& layout() const { return lay_; }
  Attention attention() const { return attn_; }
  Precision precision() const { return prec_; }
  std::size_t device_bytes() const { return arena_.bytes(); }
  int launches_per_step() const { return launches_last_; }
  const gtb::xfmr::gpu::AttentionBatching& batching() const { return batch_; }
  cudaStream_t stream() const { return stream_.get(); }

 private:
  struct Layer {
    float *h1, *qkv, *ctx, *x_mid, *h2, *u, *g, *mean1, *rstd1, *mean2, *rstd2, *attn;  // attn: P or lse
  };
  struct LtPlan;
  using LtKey = std::tuple<bool, bool, int, int, int, int, int, int>;

  template <class F> void op(Piece p, F&& f);
  bool bf16() const { return prec_ == Precision::bf16; }
  std::size_t es() const { return bf16() ? 2 : 4; }
  // A GEMM operand in the GEMMs' input type: src itself, or (bf16) src cast into a slot.
  const void* operand(const float* src, std::size_t n, int slot);
  const void* weight(int l, gtb::xfmr::P t) const;
  float* par(int l, gtb::xfmr::P t) const { return params_ + lay_.at(l, t); }
  float* grad(int l, gtb::xfmr::P t) const { return grads_ + lay_.at(l, t); }
  // Row-major C (M x N) = op(A) op(B) + beta C, C in FP32, through cuBLASLt.
  void mm(bool ta, bool tb, int M, int N, int K, const void* A, int lda, const void* B, int ldb, float* C, int ldc,
          float beta = 0.0f);
  // One of the materialised attention's GEMMs over the batching's matrices (strided-batched cuBLAS);
  // a, b: the start of the operands' buffers in the GEMMs' input type, c: of the output's.
  void bmm(const gtb::xfmr::gpu::AttentionGemm& g, const void* a, const void* b, float* c);
  void forward();
  void backward();
  void attention_forward(Layer& L);
  void attention_backward(Layer& L, const float* dctx, float* dqkv);

  Config cfg_;
  Layout lay_;
  Attention attn_;
  Precision prec_;
  gtb::xfmr::gpu::AttentionBatching batch_;
  gtb::cuda::mlp::DeviceArena arena_;
  Stream stream_;
  Blas blas_;
  cublasLtHandle_t lt_ = nullptr;
  std::map<LtKey, std::unique_ptr<LtPlan>> plans_;
  void* workspace_ = nullptr;
  float *params_ = nullptr, *grads_ = nullptr, *m_ = nullptr, *v_ = nullptr;
  void* w16_ = nullptr;
  void* slot_[2] = {nullptr, nullptr};
  int* t_dev_ = nullptr;
  std::vector<Layer> layers_;
  std::vector<float*> xs_;  // the residual stream: xs_[0] the input, xs_[l + 1] layer l's output
  float *target_ = nullptr, *dx_ = nullptr, *dx_mid_ = nullptr, *dh_ = nullptr, *dff_ = nullptr, *dqkv_ = nullptr,
        *tmp_ = nullptr, *row_loss_ = nullptr, *attn_scratch_ = nullptr;
  std::vector<std::pair<float*, std::size_t>> activations_;  // what poison() fills
  StepGraph graph_;
  int launches_ = 0, launches_last_ = 0;
  OpEvents op_events_;             // pieces()'s window
  std::vector<Piece> event_piece_;  // the piece of each operation in it
};

}  // namespace gtb::cuda::xfmr
