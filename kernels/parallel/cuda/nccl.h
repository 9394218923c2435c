// NCCL collectives across this process's GPUs (one communicator per GPU from ncclCommInitAll).
// Host-only header: the bench includes it whether or not NCCL was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/parallel/collective.h"
#include "kernels/common/names.h"

namespace gtb::parallel::nccl {

enum class DType { fp32, bf16 };
inline constexpr NameTable<DType, 2> kDTypeNames = {{{DType::fp32, "fp32"}, {DType::bf16, "bf16"}}};
inline const char* to_string(DType d) { return name_of(kDTypeNames, d); }
inline DType dtype_from_string(const std::string& s) { return parse_name(kDTypeNames, s, "dtype"); }
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
  // Runs `reps` collectives (one group call each) and returns host seconds after synchronizing every
  // GPU, as nccl-tests times them.
  double time(std::int64_t reps);
  // Enqueues `reps` collectives without waiting (to run beside other work); sync() waits for them.
  void enqueue(std::int64_t reps);
  void sync();
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtb::parallel::nccl
