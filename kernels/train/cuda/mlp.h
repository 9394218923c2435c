// The GPU MLP training step: cuBLAS GEMMs + the custom kernels, eager or as a CUDA Graph, FP32/TF32
// or mixed precision (FP16/BF16 with FP32 master weights and dynamic loss scaling). Host C++.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/blas.h"
#include "kernels/common/cuda/graph.h"
#include "kernels/common/cuda/memory.h"
#include "kernels/common/cuda/step_events.h"
#include "kernels/train/cuda/mlp_kernels.h"
#include "kernels/train/mlp.h"
#include "kernels/train/reference.h"
#include "kernels/train/mlp_step_check.h"

namespace gtb::cuda::mlp {

using gtb::mlp::Config;
using gtb::mlp::Layout;

// One of kTrainPrecisions; GpuMlp rejects the GEMM-only ones.
using gtb::Precision;
using gtb::precision_from_string;
using gtb::to_string;
inline bool is_mixed(Precision p) { return p == Precision::fp16 || p == Precision::bf16; }
DType storage_type(Precision p);

// Where the batch comes from each step: already on the device, or copied from pinned or pageable
// host memory at the start of every step.
GTB_NAMED_ENUM(DataSource, kDataSourceNames, device, pinned, pageable);
inline DataSource data_source_from_string(const std::string& s) {  // throws std::invalid_argument
  return parse_name(kDataSourceNames, s, "data source");
}

// Device allocations of one model, with a high-water mark and an optional cap (over it:
// gtb::OutOfMemory, as for a real cudaMalloc failure).
class DeviceArena {
 public:
  explicit DeviceArena(std::size_t cap = 0) : cap_(cap) {}
  void* alloc(std::size_t bytes);
  std::size_t bytes() const { return used_; }
 private:
  std::size_t cap_ = 0, used_ = 0;
  std::vector<DeviceBuffer> bufs_;
};

class GpuMlp {
 public:
  // batch = rows per optimizer step, split into micro_batches equal micro-batches.
  GpuMlp(const Config& c, int batch, int micro_batches, Precision p, std::size_t cap_bytes = 0);
  ~GpuMlp();
  GpuMlp(const GpuMlp&) = delete;
  GpuMlp& operator=(const GpuMlp&) = delete;

  // The step's data (batch rows). device: copied once now; pinned/pageable: kept on the host and
  // copied at the start of every step.
  void load_data(const float* x, const int* labels, DataSource src);

  void step();           // enqueue one optimizer step on stream() (asynchronous)
  // step() in phases, for callers that put work between them (a data-parallel step all-reduces
  // gradients as layers finish; backward can be timed alone). step() = for each micro-batch m:
  // forward(m), backward(m); then update().
  void forward(int m);                // m == 0 also stages the batch and clears the bias gradients
  void backward_layer(int l, int m);  // layer l's weight gradient, then dZ and db of layer l-1
  void backward(int m);               // backward_layer(L..1, m); layer l's gradients are final after it on the last m
  void update();                      // optimizer (and loss-scale bookkeeping)
  float* grad_data() const { return grads_; }  // the flat gradient buffer on the device (Layout's offsets)
  void capture_graph();  // capture step() once (device or pinned data)
  void replay();         // enqueue the captured step
  bool has_graph() const { return graph_.captured(); }
  void sync() const;

  double loss() const;  // mean loss of the last step (synchronizes)
  // Tensors of the last micro-batch as float (see gtb::mlp::CpuMlp::z/a/dz), synchronizes.
  std::vector<float> fetch(gtb::mlp::Tensor t, int l) const;
  std::vector<float> params() const;
  std::vector<float> grads() const;
  std::vector<float> opt_state() const;
  void set_params(const std::vector<float>& p);
  void set_opt_state(const std::vector<float>& s);
  gtb::mlp::ScaleState scale_state() const;
  void set_scale_state(const gtb::mlp::ScaleState& s);
  void poison();  // NaN-fill activations, their gradients and the weight gradients

  const Config& config() const { return cfg_; }
  const Layout& layout() const { return lay_; }
  Precision precision() const { return prec_; }
  int micro_rows() const { return rows_; }
  int launches_per_step() const { return launches_last_; }  // API calls that enqueue device work
  std::size_t graph_nodes() const { return graph_.nodes(); }
  std::size_t device_bytes() const { return arena_.bytes(); }
  cudaStream_t stream() const { return stream_.get(); }

  // Sum of per-operation event times over host wall time of `steps` eager steps (outside the timed
  // samples: the events themselves cost a little).
  double busy_fraction(int steps);
  std::vector<KernelInfo> kernel_info() const;

 private:
  template <class F> void op(F&& f);
  void gemm(bool ta, bool tb, int m, int n, int k, const void* a, int lda, const void* b, int ldb, float beta, void* c,
            int ldc, bool out_f32);
  Config cfg_;
  Layout lay_;
  int batch_, micro_, rows_;
  Precision prec_;
  DType st_;
  DeviceArena arena_;
  Stream stream_;
  Blas blas_;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  float* opt_ = nullptr;
  void* wlow_ = nullptr;  // low-precision weights (mixed precision)
  float* x_ = nullptr;    // batch x input, fp32
  void* xlow_ = nullptr;  // batch x input, storage type (mixed precision)
  int* y_ = nullptr;
  float* row_loss_ = nullptr;
  gtb::mlp::ScaleState* ss_ = nullptr;
  std::vector<void*> z_, a_, dz_;
  DataSource src_ = DataSource::device;
  const float* host_x_ = nullptr;
  const int* host_y_ = nullptr;
  std::vector<float> pageable_x_;
  std::vector<int> pageable_y_;
  PinnedBuffer pinned_x_, pinned_y_;
  StepGraph graph_;
  int launches_ = 0, launches_last_ = 0;
  OpEvents op_events_;  // busy_fraction's window
};

// The float64 step check's view of this model (kernels/train/mlp_step_check.h): `step` enqueues the
// step to be checked (default: GpuMlp::step); the probe returns its loss (synchronizing).
gtb::mlp::StepProbe step_probe(GpuMlp& m, std::function<void()> step = nullptr);

}  // namespace gtb::cuda::mlp
