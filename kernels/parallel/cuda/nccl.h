// NCCL collectives across GPUs: every local GPU of one process (ncclCommInitAll), or one GPU per MPI
// rank (ncclCommInitRank with the unique id broadcast over MPI).
// Host-only header: the bench includes it whether or not NCCL was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/parallel/collective.h"
#include "kernels/common/names.h"

struct ncclComm;  // nccl.h's ncclComm_t is `struct ncclComm*`; kept opaque so this header needs no nccl.h

namespace gtb::parallel::nccl {

GTB_NAMED_ENUM(DType, kDTypeNames, fp32, bf16);
inline DType dtype_from_string(const std::string& s) { return parse_name(kDTypeNames, s, "dtype"); }
std::size_t elem_bytes(DType d);

bool built();           // false: built without NCCL (or without CUDA)
std::string version();  // "2.x.y", "" when not built

// Which GPU a rank drives: its place among the ranks of its host. NCCL refuses two ranks on one
// GPU, so a host needs at least as many GPUs as ranks. Returns "" when the rank has its own GPU,
// else why not (pure, for tests).
inline std::string device_shortage(int local_rank, int local_ranks, int gpus) {
  if (gpus < 1) return "no usable GPU for NCCL";
  if (local_rank < gpus) return "";
  return std::to_string(local_ranks) + " ranks on this host but " + std::to_string(gpus) +
         " GPU(s): NCCL needs a GPU of its own for every rank (start at most one rank per GPU, or --ranks 1 "
         "to drive every local GPU from one process)";
}

// Restores the calling thread's current GPU on scope exit: code here walks every local GPU, and its
// callers keep using the one they had (a stream or cuBLAS handle of another GPU fails to launch).
class KeepDevice {
 public:
  KeepDevice();
  ~KeepDevice();
  KeepDevice(const KeepDevice&) = delete;
  KeepDevice& operator=(const KeepDevice&) = delete;
 private:
  int device_ = -1;
};

// The communicators of this process, one per GPU it drives, and each one's rank in the world.
class Comms {
 public:
  // One process (MPI world of 1): every local GPU, ncclCommInitAll. Several MPI ranks: this rank's
  // GPU (its local rank), ncclCommInitRank with rank 0's unique id. Collective over MPI ranks; every
  // rank throws parallel::Unavailable together (no GPU, too few GPUs, no NCCL), never some of them.
  static std::unique_ptr<Comms> world();
  // Every local GPU of this process (ncclCommInitAll), whatever the MPI world: not collective.
  static std::unique_ptr<Comms> this_process();
  // No communicator: the GPU of the given local rank (mpi::local_rank(), mpi::local_size(): those are
  // collective, so every rank asks them before one rank alone calls this), for a step without
  // communication. Throws parallel::Unavailable when that GPU does not exist.
  static std::unique_ptr<Comms> solo(int local_rank, int local_ranks);
  ~Comms();
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  int world_size() const { return world_; }
  int local() const { return int(devices_.size()); }  // GPUs this process drives
  int device(int i) const { return devices_[std::size_t(i)]; }
  int rank(int i) const { return ranks_[std::size_t(i)]; }   // global rank of local GPU i
  ncclComm* comm(int i) const { return comms_.empty() ? nullptr : comms_[std::size_t(i)]; }

 private:
  Comms() = default;
  int world_ = 1;
  std::vector<int> devices_, ranks_;
  std::vector<ncclComm*> comms_;
};

struct CheckResult {
  bool ok = false;
  std::string detail;
};

// Buffers for one collective at one size on every GPU of a Comms.
class LocalGroup {
 public:
  enum class Scope { world, this_process };  // Comms::world() or Comms::this_process()
  // Throws parallel::Unavailable when NCCL is not built or no GPU is usable. Scope::world under several
  // MPI ranks is collective (every rank constructs it for the same case).
  LocalGroup(Collective c, std::size_t bytes, DType dtype, std::uint64_t seed, Scope scope = Scope::world);
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;
  int ranks() const;          // the world: every GPU of every rank
  int local_gpus() const;     // the GPUs this process drives
  std::size_t bytes() const;  // the size after rounding to whole elements per rank (nccl-tests' size)
  // Poisons the outputs, runs the collective once and checks this process's results on the host
  // (every rank checks its own; the bench agrees the outcome over ranks).
  CheckResult run_and_check();
  // Enqueues `reps` collectives (one group call each) without waiting; sync() waits for every GPU.
  void enqueue(std::int64_t reps);
  void sync();
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtb::parallel::nccl
