// NCCL collectives across this process's GPUs (one communicator per GPU from ncclCommInitAll).
// Host-only header: the bench includes it whether or not NCCL was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/parallel/collective.h"

namespace gtb::parallel::nccl {

enum class DType { fp32, bf16 };
DType dtype_from_string(const std::string& s);
std::size_t elem_bytes(DType d);

bool built();           // false: built without NCCL (or without CUDA)
std::string version();  // "2.x.y", "" when not built

struct CheckResult {
  bool ok = false;
  std::string detail;
};

// Buffers and communicators for one collective at one size on every local GPU.
class LocalGroup {
 public:
  // Throws parallel::Unavailable when NCCL is not built or no GPU is usable.
  LocalGroup(Collective c, std::size_t bytes, DType dtype, std::uint64_t seed);
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;
  int ranks() const;
  std::size_t bytes() const;  // the size after rounding to whole elements per rank (nccl-tests' size)
  // Poisons the outputs, runs the collective once and checks every GPU's result on the host.
  CheckResult run_and_check();
  // Enqueues `reps` collectives (one group call each) without waiting; sync() waits for every GPU.
  void enqueue(std::int64_t reps);
  void sync();
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtb::parallel::nccl
