// The blocking kernel: holds a stream until the host has queued the work to be timed (NVBench's way).
// Include only from code compiled when GTB_HAVE_CUDA is defined.
#pragma once

#include <cuda_runtime_api.h>

namespace gtb::cuda {

// Flags in mapped pinned memory, shared by the host and the kernel.
struct BlockFlags {
  int release;    // the host sets it to 1 once the timed work is queued
  int timed_out;  // the kernel sets it to 1 when it gave up waiting
};

// Enqueues a one-thread kernel on `stream` that spins until flags->release is non-zero or
// `timeout_seconds` have passed on the GPU's global timer. `device_flags` is the device view of
// the mapped allocation (cudaHostGetDevicePointer).
void launch_block_stream(BlockFlags* device_flags, double timeout_seconds, cudaStream_t stream);

}  // namespace gtb::cuda
