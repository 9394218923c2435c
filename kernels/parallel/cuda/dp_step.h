// The data-parallel MLP step on GPUs: the train family's CUDA step on every GPU, each on its shard
// of the global batch, gradients averaged with NCCL in DDP-style buckets, with or without overlap.
// Host-only header.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/parallel/buckets.h"
#include "kernels/train/mlp.h"
#include "kernels/parallel/cuda/nccl.h"

namespace gtb::parallel::nccl {

// One step's phases on the slowest local GPU, from CUDA events on each GPU's compute stream.
struct GpuStepTimes {
  double step_s = 0;       // all the steps of the call
  double last_step_s = 0;  // the last step alone
  double backward_s = 0;  // backward kernels (bucket all-reduces in flight beside them with overlap)
  double comm_s = 0;      // after backward, until every bucket is reduced: the communication not hidden
};

class GpuDpMlp {
 public:
  // comms: the GPUs and communicators (Comms::world(), or Comms::solo() for a step without any
  // communication). x, labels: the whole global batch (rows_per_replica * comms.world_size() rows);
  // the GPU of global rank r takes rows [r * rows_per_replica, (r + 1) * rows_per_replica).
  // overlap: a bucket's all-reduce starts on a second stream as soon as its last layer's backward is
  // enqueued, ordered after it by an event; without: every bucket after backward, on the compute stream.
  GpuDpMlp(std::shared_ptr<const Comms> comms, const mlp::Config& c, int rows_per_replica, std::vector<Bucket> buckets,
           bool overlap, const float* x, const int* labels);
  ~GpuDpMlp();
  GpuDpMlp(const GpuDpMlp&) = delete;
  GpuDpMlp& operator=(const GpuDpMlp&) = delete;

  int local() const;  // GPUs this process drives
  const std::vector<Bucket>& buckets() const { return buckets_; }
  const mlp::Layout& layout() const { return lay_; }

  void step();  // enqueue one step on every local GPU
  void sync();
  // `steps` steps; the sample is the slowest local GPU's time from its first step's start to its last
  // step's end; the phases are those of the last step.
  GpuStepTimes time_steps(std::int64_t steps);

  std::vector<float> params(int i) const;      // local GPU i's weights (synchronizes)
  void set_params(const std::vector<float>& p);  // every local GPU; momentum back to zero
  void poison();                                 // NaN-fill gradients and activations on every GPU

 private:
  struct Replica;
  void on(int i) const;                          // make local GPU i current
  void enqueue_step(bool mark_start);
  void reduce(std::size_t bucket, bool on_comm_stream);  // one group call over every local GPU
  std::shared_ptr<const Comms> comms_;
  mlp::Config cfg_;
  mlp::Layout lay_;
  std::vector<Bucket> buckets_;
  std::vector<BucketRanges> ranges_;
  bool overlap_, communicate_;
  std::vector<std::unique_ptr<Replica>> reps_;
};

}  // namespace gtb::parallel::nccl
