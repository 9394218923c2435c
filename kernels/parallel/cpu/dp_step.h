// The data-parallel MLP step on the CPU: the train family's model and math, each rank on its shard
// of the global batch, gradients all-reduced in DDP-style buckets with or without overlap.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/common/mlp.h"
#include "kernels/parallel/cpu/comm.h"

namespace gtb::parallel {

// DDP's bucket caps are in MiB (bucket_cap_mb * 2^20 bytes; the first bucket 1 MiB).
constexpr double kMiB = 1024.0 * 1024.0;

// Layers whose gradients travel together, in the order backward finishes them (last layer first).
struct Bucket {
  int first_layer = 0, last_layer = 0;  // 1-based, first_layer >= last_layer (descending)
  std::size_t elems = 0;                // weights + biases of those layers, unpadded
};
// DDP's assignment: walk the layers from the last, close a bucket once it reaches its cap; the first
// bucket's cap is `first_mib`, the others `cap_mib`. A layer larger than the cap gets its own bucket.
std::vector<Bucket> plan_buckets(const mlp::Layout& lay, double first_mib, double cap_mib);

// Where a bucket's gradients lie in the flat parameter layout (all weights, then all biases): its
// layers are adjacent, so their weights form one range and their biases another, padding included
// (padding gradients stay zero, so reducing them in place changes nothing). The GPU step
// all-reduces these two ranges in place instead of packing a bucket buffer.
struct FlatRange {
  std::size_t offset = 0, count = 0;  // elements
};
struct BucketRanges {
  FlatRange weights, biases;
};
BucketRanges flat_ranges(const mlp::Layout& lay, const Bucket& b);
// Throws std::invalid_argument unless the buckets hold every layer's parameters exactly once.
void check_cover(const mlp::Layout& lay, const std::vector<Bucket>& buckets);

// The rows of the global batch that the replica of global rank `rank` takes: [first, first + rows).
inline std::size_t shard_first_row(int rank, int rows_per_rank) {
  if (rank < 0 || rows_per_rank < 1) throw std::invalid_argument("shard_first_row: rank >= 0 and rows >= 1 required");
  return std::size_t(rank) * std::size_t(rows_per_rank);
}

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
};

}  // namespace gtb::parallel
