// The CPU MLP training step (OpenBLAS, oneDNN or oneMKL GEMMs in FP32; in BF16 each GEMM site through
// the shared per-shape plan, kernels/common/cpu/gemm_plan.h; + OpenMP loops); its data and float64
// reference are kernels/train/reference.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/cpu/blas.h"
#include "kernels/common/cpu/gemm_plan.h"
#include "kernels/common/cpu/host_buffer.h"
#include "kernels/common/precision.h"
#include "kernels/train/mlp.h"
#include "kernels/train/reference.h"
#include "kernels/train/mlp_step_check.h"

namespace gtb::mlp {

// The CPU step's loss over n rows of `classes` logits (row-major z, labels[r] for row r): adds the
// last layer's bias b to each row of z in place, writes scale * dLoss/dz into dz and adds it, column
// by column, into colsum; returns the rows' summed loss (unscaled). One compiled definition for both
// of the CPU step's threading modes and for the record that prices it (the vectorize family's
// softmax_xent, which calls this very function).
double softmax_xent_rows(float* z, float* dz, const float* b, const int* labels, std::size_t n, std::size_t classes,
                         float scale, float* colsum);

// The CPU step's SGD-with-momentum update of n parameters (sgd_momentum, the momentum flushed to zero
// below the smallest normal float): v = mu v + g, w -= lr v. One compiled definition for both of the
// CPU step's threading modes and for the record that prices it (the vectorize family's sgd).
void sgd_update(float* w, float* v, const float* g, std::size_t n, float lr, float mu);

// Counts the bytes a model allocates and enforces an optional cap: going over it (or the system
// refusing) throws gtb::OutOfMemory, so a too-large batch becomes a skipped record, not a crash.
class HostAllocator {
 public:
  explicit HostAllocator(std::size_t cap_bytes = 0) : cap_(cap_bytes) {}
  float* floats(std::size_t n);  // 64-byte aligned, zeroed, owned by the allocator
  int* ints(std::size_t n);
  std::size_t bytes() const { return used_; }
  std::size_t cap() const { return cap_; }
 private:
  void* raw(std::size_t bytes);
  std::size_t cap_ = 0, used_ = 0;
  std::vector<cpu::HostBuffer> blocks_;
};

// The training step on the CPU. All buffers are allocated up front for `max_batch` rows per
// micro-batch; a step over more rows than that must use micro-batches (gradient accumulation).
class CpuMlp {
 public:
  // How the cores are shared (OpenMP threads; OpenBLAS's own pool is held at one thread except in
  // `blas`). rows (default): data parallel inside one parallel region per step: each thread takes
  // a slice of the batch through the whole forward and backward pass with single-threaded OpenBLAS
  // calls (rows are independent), accumulating its own weight gradients; one barrier, then each
  // thread sums the gradients and updates its share of the parameters. One synchronization per
  // step instead of one per GEMM and loop. Used when every thread gets >= 32 rows; smaller batches
  // fall back to split. split: every GEMM and loop is cut into one slice per thread (a parallel
  // region each). blas: OpenBLAS threads its GEMMs itself and OpenMP threads the loops.
  enum class Threading { rows, split, blas };

  CpuMlp(const Config& c, int max_micro_batch, std::size_t cap_bytes = 0);

  // One optimizer step on `batch` rows split into `micro_batches` equal micro-batches whose
  // gradients are accumulated (the effective batch is `batch`). Returns the mean loss.
  float step(const float* x, const int* labels, int batch, int micro_batches = 1);

  const Config& config() const { return cfg_; }
  const Layout& layout() const { return lay_; }
  float* params() { return params_; }
  const float* params() const { return params_; }
  const float* grads() const { return grads_; }
  // SGD: momentum buffer (one); Adam: m then v (two), each layout().total long.
  float* opt_state() { return opt_; }
  const float* opt_state() const { return opt_; }
  int opt_state_count() const { return cfg_.optim == Optim::adam ? 2 : 1; }
  int steps_taken() const { return t_; }
  void set_params(const std::vector<float>& p);
  void reset_optimizer();
  void poison();  // NaN-fill activations, their gradients and the gradients, before a checked step

  // Tensors of the last micro-batch, for checks: pre-activation Z_l (with bias), activation A_l
  // (l < depth; A_0 is the input), and dLoss/dZ_l. l counts layers from 1. rows x dims[l].
  const float* z(int l) const { return z_[static_cast<std::size_t>(l - 1)]; }
  const float* a(int l) const { return a_[static_cast<std::size_t>(l)]; }
  const float* dz(int l) const { return dz_[static_cast<std::size_t>(l - 1)]; }
  int last_rows() const { return last_rows_; }

  std::size_t bytes() const { return alloc_.bytes(); }
  static int threads();
  void set_threading(Threading t);
  Threading threading() const { return threading_; }
  // The library every GEMM of the FP32 step goes through (OpenBLAS by default).
  void set_gemm_lib(cpu::GemmLib lib);
  cpu::GemmLib gemm_lib() const { return lib_; }
  // fp32 (default) or bf16: autocast as PyTorch does it on the CPU: each GEMM's operands rounded
  // to bfloat16 as they enter it, products accumulated and stored in FP32; weights, gradients,
  // optimizer state and every elementwise pass stay FP32. The BF16 GEMMs go through the shared
  // per-shape plan: each site (layer x forward / weight gradient / input gradient) runs the fastest
  // verified of the FP32 libraries on rounded operands, oneMKL's BF16 GEMM and, where the CPU has a
  // native one, oneDNN's BF16 matmul (not offered in rows mode, whose products run one per thread
  // inside the step's parallel region). Throws std::invalid_argument for any other precision.
  void set_precision(Precision p);
  Precision precision() const { return prec_; }
  // The machine the BF16 plan's candidates are read from (tests inject one; default: this one).
  void set_plan_machine(const cpu::plan::Machine& m);
  // Chooses the BF16 plan for a step over micro-batches of `rows` rows in the current threading
  // (verification and timing, outside any timed region); step() does it when the plan does not fit.
  void plan_gemms(int rows);
  const cpu::plan::Plan& gemm_plan() const { return plan_; }
  // Whether a step over micro-batches of `rows` rows runs in rows mode (else one parallel region
  // per GEMM and loop).
  bool rows_mode(int rows) const;

  // Where the steps since reset_pieces() spent their time, on the calling thread's clock (in rows
  // mode, thread 0's view of the shared region): its GEMM calls, its update (rows mode: the sum of
  // the threads' gradients and the update), and the whole step; the rest is the passes, the loss
  // and the parallel regions' starts and barriers.
  struct Pieces {
    double gemm = 0, optimizer = 0, total = 0;
    long steps = 0;
  };
  const Pieces& pieces() const { return pieces_; }
  void reset_pieces() { pieces_ = Pieces{}; }

 private:
  void forward_backward(const float* x, const int* labels, int rows, float grad_scale, bool accumulate,
                        double& loss_sum);
  void optimizer_step();
  Config cfg_;
  Layout lay_;
  int max_rows_;
  HostAllocator alloc_;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  float* opt_ = nullptr;
  std::vector<float*> z_, a_, dz_;
  std::vector<float> colsum_scratch_;
  // The GEMM sites of the BF16 plan: forward, weight gradient, input gradient of layer l (1-based).
  enum Site { fwd = 0, dw = 1, dx = 2 };
  static int site_index(int l, Site s) { return 3 * (l - 1) + int(s); }
  void gemm(int site, bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float beta,
            float* c, int ldc) const;
  // One library call on the calling thread, in the model's precision.
  void leaf_gemm(int site, bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                 float beta, float* c, int ldc) const;
  float step_rows(const float* x, const int* labels, int batch, int micro_batches, int parts);
  Threading threading_ = Threading::rows;
  cpu::GemmLib lib_ = cpu::GemmLib::openblas;
  Precision prec_ = Precision::fp32;
  cpu::plan::Plan plan_;
  std::string plan_key_;  // what plan_ was chosen for: "" none
  std::optional<cpu::plan::Machine> plan_machine_;
  std::vector<float*> thread_grads_;  // gradient buffers of threads 1.. in rows mode
  mutable Pieces pieces_;
  int t_ = 0;
  int last_rows_ = 0;
  const float* x_ = nullptr;
};

// The float64 step check's view of this model (kernels/train/mlp_step_check.h): `step` takes the step
// to be checked and returns its loss; `rows` is the row count of the micro-batch whose tensors the
// model holds afterwards (the last one).
StepProbe step_probe(CpuMlp& m, std::function<double()> step, int rows);

}  // namespace gtb::mlp
