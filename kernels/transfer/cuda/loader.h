// The data loader with a GPU consumer: worker threads fill a ring of host buffers, the host thread
// copies each batch to the device and launches a consumer kernel of fixed length; GPU idle time
// comes from event timestamps around the consumer kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/common/cuda/memory.h"
#include "kernels/transfer/cuda/transfer.h"
#include "kernels/transfer/loader.h"

namespace gtb::cuda::transfer {

struct GpuLoaderConfig {
  cpu::LoaderConfig loader;
  MemoryKind memory = MemoryKind::pinned;  // ring buffers: pinned or pageable
  std::size_t batch_bytes = 0;
  double kernel_seconds = 0;  // length of the consumer kernel per batch
};

struct GpuLoaderRun {
  double seconds = 0;             // host wall, first wait to the last kernel's end
  double gpu_seconds = 0;         // first consumer kernel start to last end (events)
  double gpu_idle_fraction = 0;   // time between consumer kernels over gpu_seconds
  cpu::LoaderRun host;            // the host thread's view (its waits for workers)
  std::vector<unsigned long long> checksums;  // per batch, as the GPU read it
};

class GpuLoader {
 public:
  explicit GpuLoader(const GpuLoaderConfig& cfg);  // throws std::invalid_argument on a bad config
  ~GpuLoader();
  GpuLoaderRun run(const cpu::ProduceFn& produce);

 private:
  GpuLoaderConfig cfg_;
  std::vector<std::unique_ptr<HostMemory>> ring_;
  std::vector<void*> slots_;
  DeviceBuffer dbuf_[2];
  DeviceBuffer sums_;
  Stream copy_s_, compute_s_;
  std::vector<std::unique_ptr<Event>> k_start_, k_end_;
  std::unique_ptr<Event> copied_[2], consumed_[2];
};

}  // namespace gtb::cuda::transfer
