// The data-parallel MLP step on the CPU: the train family's model and math, each rank on its shard
// of the global batch, gradients all-reduced in DDP-style buckets with or without overlap.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/common/cpu/blas.h"
#include "kernels/parallel/buckets.h"
#include "kernels/parallel/comm.h"
#include "kernels/train/mlp.h"

namespace gtb::parallel {


struct StepTimes {
  double backward_s = 0;  // backward pass, including overlapped communication calls
  double comm_s = 0;      // blocking all-reduces after backward (no overlap) or waiting for them (overlap)
  double total_s = 0;
};

class DpMlp {
 public:
  // rows: this rank's shard; global_rows: the whole batch over every rank (the loss is its mean).
  // communicate=false runs the same step without any reduction (a one-rank baseline).
  DpMlp(const mlp::Config& c, int rows, int global_rows, std::vector<Bucket> buckets, bool overlap,
        bool communicate = true);

  // One SGD-with-momentum step on this rank's rows. Returns this rank's share of the mean loss.
  float step(const float* x, const int* labels);

  const mlp::Layout& layout() const { return lay_; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& grads() const { return grads_; }
  const StepTimes& last_times() const { return times_; }
  // The buckets' send buffers (a one-rank step, which does not communicate, never fills them).
  const std::vector<std::vector<float>>& bucket_buffers() const { return bucket_bufs_; }
  // The FP32 GEMM library of the step's products (default OpenBLAS); throws where it is not available.
  void set_gemm_lib(cpu::GemmLib lib);
  cpu::GemmLib gemm_lib() const { return lib_; }
  void poison();  // NaN-fill gradients and bucket buffers before a checked step

 private:
  void pack(const Bucket& b, std::vector<float>& buf) const;
  void unpack(const Bucket& b, const std::vector<float>& buf);
  mlp::Config cfg_;
  mlp::Layout lay_;
  int rows_, global_rows_;
  std::vector<Bucket> buckets_;
  bool overlap_, communicate_;
  std::vector<float> params_, grads_, momentum_;
  std::vector<std::vector<float>> z_, a_;  // z_[l-1] = Z_l, a_[l] = A_l (a_[0] unused: the input)
  std::vector<float> dz_, dz_prev_;
  std::vector<std::vector<float>> bucket_bufs_;
  StepTimes times_;
  cpu::GemmLib lib_ = cpu::GemmLib::openblas;
};

}  // namespace gtb::parallel
