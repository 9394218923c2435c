// Device copies of one build-flag workload's inputs and outputs, a variant's launch on them, and the
// float64 check of what it wrote. Host C++.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/common/cuda/memory.h"
#include "kernels/pitfalls/cuda/flag_kernels.h"
#include "kernels/pitfalls/reference.h"

namespace gtb::pitfalls {

class DeviceFlagRun {
 public:
  explicit DeviceFlagRun(const FlagData& d);  // uploads the inputs; keeps a reference to d
  void poison();                              // NaN-fills the outputs (synchronizes)
  void enqueue(const DeviceKernels& k, cudaStream_t s);  // throws gtb::CudaError on a launch error
  FlagCheck check() const;                    // waits for the device, downloads, checks against float64

 private:
  const FlagData& d_;
  gtb::cuda::DeviceBuffer x_, bias_, g_, labels_, out_, out2_;
};

}  // namespace gtb::pitfalls
