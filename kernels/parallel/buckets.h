// DDP-style gradient buckets and batch shards: the plan both the CPU and the GPU data-parallel steps
// follow (host code, no MPI or CUDA).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/train/mlp.h"

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

}  // namespace gtb::parallel
