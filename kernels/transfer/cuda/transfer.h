// GPU side of the transfer family: host memory kinds, copies in each direction, the cost of
// pinning, batched copies, copy/compute overlap and the kernels they use. Host code lives in
// transfer.cpp (runtime API), kernels in transfer_kernels.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/memory.h"
#include "kernels/common/cuda/timer.h"
#include "kernels/common/verify.h"
#include "kernels/common/names.h"
#include "kernels/transfer/cuda/transfer_kernels.h"

namespace gtb::cuda::transfer {

// pageable: aligned_alloc, pre-faulted. pinned: cudaHostAlloc. registered: pageable memory then
// cudaHostRegister. write_combined: cudaHostAlloc(WriteCombined), fast for the GPU to read, very
// slow for the CPU to read (H2D only).
GTB_NAMED_ENUM(MemoryKind, kMemoryKindNames, pageable, pinned, registered, write_combined);
inline MemoryKind memory_kind_from_string(const std::string& s) {  // throws std::invalid_argument
  return parse_name(kMemoryKindNames, s, "memory kind");
}

// Host memory of one kind, pre-faulted. Allocation failure throws gtb::OutOfMemory.
class HostMemory {
 public:
  HostMemory(std::size_t bytes, MemoryKind kind);
  ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  void* get() const { return p_; }
  std::size_t bytes() const { return n_; }
  MemoryKind kind() const { return kind_; }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
  MemoryKind kind_;
};

GTB_NAMED_ENUM(Direction, kDirectionNames, h2d, d2h, bidir);
inline Direction direction_from_string(const std::string& s) {  // throws std::invalid_argument
  return parse_name(kDirectionNames, s, "copy direction");
}

// One copy benchmark point. bidir runs an H2D and a D2H of `bytes` each at once on two streams.
class CopyCase {
 public:
  CopyCase(Direction dir, MemoryKind kind, std::size_t bytes);
  ~CopyCase();
  // Random source, poisoned destination, one copy through the measured path, byte compare.
  ErrorReport verify();
  // Queues `reps` copies back to back on stream(); bidir queues its D2H copies on a second stream
  // that starts at `start` (an event already recorded on stream()) and joins stream() at the end.
  void enqueue_reps(std::int64_t reps, cudaEvent_t start);
  // One copy through its API calls, then synchronize: what a caller waits.
  void run_once();
  cudaStream_t stream() const { return s0_.get(); }
  // Operations one repetition queues, and whether the driver stages the copy through the host
  // (pageable memory: the queued work waits for the calling thread, so it must not sit behind a
  // held stream).
  std::int64_t ops_per_rep() const { return dir_ == Direction::bidir ? 2 : 1; }
  bool host_staged() const;
  double bytes_per_rep() const;

 private:
  void enqueue();
  Direction dir_;
  std::size_t bytes_;
  std::unique_ptr<HostMemory> h_in_, h_out_;
  DeviceBuffer d_in_, d_out_;
  Stream s0_, s1_;
  Event e_join_;
};

// Pinning cost: host_alloc = cudaHostAlloc + cudaFreeHost; host_register = cudaHostRegister +
// cudaHostUnregister of an existing, touched pageable buffer.
GTB_NAMED_ENUM(PinMethod, kPinMethodNames, host_alloc, host_register);
inline PinMethod pin_method_from_string(const std::string& s) { return parse_name(kPinMethodNames, s, "pin method"); }
class PinCase {
 public:
  PinCase(PinMethod m, std::size_t bytes);
  // Pins once, checks the runtime reports host memory that is written and read back intact.
  ErrorReport verify();
  void run_once();  // one pin and unpin

 private:
  PinMethod m_;
  std::size_t bytes_;
  std::unique_ptr<HostMemory> pageable_;
};

// Batching `count` samples of `sample_bytes` (scattered in pinned memory) into one device batch.
GTB_NAMED_ENUM(BatchMethod, kBatchMethodNames, per_sample, pack_then_copy, prepacked, memcpy_batch);
inline BatchMethod batch_method_from_string(const std::string& s) {
  return parse_name(kBatchMethodNames, s, "batching method");
}
bool memcpy_batch_available();  // the toolkit declares cudaMemcpyBatchAsync
class BatchingCase {
 public:
  BatchingCase(BatchMethod m, std::size_t count, std::size_t sample_bytes);
  ErrorReport verify();
  void run_once();  // API calls (and packing) through synchronize

 private:
  BatchMethod m_;
  std::size_t count_, sample_bytes_;
  std::unique_ptr<HostMemory> samples_, packed_, staging_;
  std::vector<const void*> srcs_;
  std::vector<void*> dsts_;
  std::vector<std::size_t> sizes_;
  DeviceBuffer d_;
  Stream s_;
};

// Copy-in, compute, copy-out over `chunks` chunks, on 1 stream (serial) or 2-4 streams each with
// its own device buffers (double / triple / quadruple buffering).
struct OverlapConfig {
  std::size_t chunk_bytes = 0;
  int chunks = 0;
  int streams = 1;
  double compute_ratio = 1.0;  // kernel time per chunk / copy (in + out) time per chunk
};
class OverlapCase {
 public:
  // Calibrates the kernel length with `timer`; throws std::invalid_argument on a bad cfg.
  OverlapCase(const OverlapConfig& cfg, const DeviceTimer& timer);
  ~OverlapCase();
  ErrorReport verify();
  // One pass over every chunk, starting and ending on stream(). copies / compute: which parts are
  // queued (copies only, or the kernels only, are the reference times of the overlap fraction);
  // serial on stream() alone when `overlapped` is false. Pinned buffers only, so the pipeline may
  // queue behind a held stream: the other streams fork from stream() and join it again.
  void enqueue_pipeline(bool copies, bool compute, bool overlapped);
  std::int64_t pipeline_ops(bool copies, bool compute, bool overlapped) const;  // operations one pass queues
  cudaStream_t stream() const { return streams_[0]->get(); }
  int iters() const { return iters_; }
  double bytes_per_rep() const;

 private:
  OverlapConfig cfg_;
  std::size_t n_;  // floats per chunk
  int iters_ = 1;
  std::unique_ptr<HostMemory> h_in_, h_out_;
  std::vector<DeviceBuffer> d_in_, d_out_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Event>> done_;
  Event fork_{false};
};
int async_engine_count();

}  // namespace gtb::cuda::transfer
